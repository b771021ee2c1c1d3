// Pieces of the command line that load no store and no schema: option parsers, exit codes and
// failure reporting, output. The program is built from these alone (cli/main.ts), so `perch
// --help`, `--version` and a mistyped flag answer without loading what a command needs.
import { InvalidArgumentError } from 'commander';
import { ConfigError } from '../config-error';
import { printable } from './format';

export function intOption(min: number, max: number) {
  return (value: string): number => {
    if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}.`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}.`);
    return n;
  };
}

/** A bad value noticed by a command itself (not by commander's parser): exit 2 like a bad flag. */
export class UsageError extends Error {}

/**
 * SQLite's code for one of its errors, as ` (SQLITE_BUSY_SNAPSHOT)`: its message alone ("database
 * is locked") names none of the several ways a lock can be refused, which a rare failure then
 * cannot be told apart by. Empty for other errors.
 */
function sqliteCode(err: unknown, message: string): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') && !message.includes(code) ? ` (${code})` : '';
}

/** Exit codes: 2 for a bad flag, value or configuration; 1 for anything that failed at run time. */
export function fail(err: unknown): never {
  const message = err instanceof Error ? err.message : String(err);
  // A message may quote a file or an argument (a JSON parse error quotes the file's text):
  // control characters are printed escaped.
  process.stderr.write(`perch: ${printable(message.split('\n')[0])}${sqliteCode(err, message)}\n`);
  process.exit(err instanceof ConfigError || err instanceof UsageError ? 2 : 1);
}

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value) + '\n');
}

/**
 * A reader that closed its end (`perch status | head -1`) is not a failure: output it no longer
 * wants is dropped and the command ends as it would have, exit 0, without a stack trace.
 */
export function ignoreClosedOutput(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') return;
      throw err;
    });
  }
}
