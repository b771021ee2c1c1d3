// perch bench [scenario…]: measures the appliance with the scenarios of bench/ (compiled into
// dist/bench/), each against a baseline run alongside. Without a scenario it lists them with their
// goals. The benchmark code (and its load generator, a development dependency) is loaded only
// when this command runs, so that no other command pays for it.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { constants } from 'node:os';
import { InvalidArgumentError } from 'commander';
import { UsageError } from './usage';
import { SERVE_ENVIRONMENT, SERVE_NODE_FLAGS } from '../server/node-flags';
import type { RunOptions } from '../../bench/runner';

export interface BenchFlags {
  duration?: number;
  connections?: number;
  threads?: number;
  rounds?: number;
  url?: string;
  key: string[];
  json?: string;
  quick: boolean;
}

/** --duration: seconds, a positive number (fractions allowed), at most an hour. */
export function secondsOption(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || !(n > 0) || n > 3600) throw new InvalidArgumentError('expected seconds, more than 0 and at most 3600.');
  return n;
}

export function urlOption(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('expected an http:// or https:// URL.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidArgumentError('expected an http:// or https:// URL.');
  return url.origin;
}

export function collectKeys(value: string, previous: string[]): string[] {
  return [...previous, value];
}

type Runner = typeof import('../../bench/runner');

function loadRunner(): Runner {
  const runner = join(__dirname, '..', '..', 'bench', 'runner.js');
  if (!existsSync(runner)) throw new Error(`the benchmarks are not built (${runner}); run npm run build`);
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(runner) as Runner;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && /autocannon|cli-progress|'ws'/.test((err as Error).message)) {
      throw new Error('perch bench needs the development dependencies: run npm install (without --omit=dev)');
    }
    throw err;
  }
}

/**
 * The Node.js flags to run the load generator with: this process's own, less those of
 * `perch serve` (server/node-flags.ts), which the bin/perch shebang gives every command. They
 * size V8's heap for a server that must stay small. The load generator runs in this process, and
 * under them it collected far more often, which cost the faster side of a comparison (a bare
 * baseline) more than the slower; and a scenario with slow answers (V8 then allocates what keeps
 * surviving its young generation straight in the old one) left every later scenario of the same
 * run driving its load at a fraction of the rate, in a storm of full collections.
 */
export function loadGeneratorFlags(execArgv: readonly string[]): string[] {
  return execArgv.filter((f) => !SERVE_NODE_FLAGS.includes(f));
}

/**
 * The environment to run the load generator with: this process's, less the settings the shebang
 * gives `perch serve` (SERVE_ENVIRONMENT), for the same reason as the flags. The perch servers a
 * scenario starts get them back (test/helpers/server.ts, startServer), as `npm start` does.
 */
export function loadGeneratorEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) if (SERVE_ENVIRONMENT[name] !== value) out[name] = value;
  return out;
}

/** Runs this same command again with Node.js flags `nodeFlags` and environment `env`; resolves with its exit code. */
function runAgainWith(nodeFlags: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...nodeFlags, process.argv[1], ...process.argv.slice(2)], { stdio: 'inherit', env });
    // The child stops its servers and cleans up on its own (bench/runner.ts, stopOnSignals); this
    // process only passes the signal on (a Ctrl-C reaches both) and waits.
    const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
    process.on('SIGINT', forward('SIGINT'));
    process.on('SIGTERM', forward('SIGTERM'));
    child.on('exit', (code, signal) => resolve(code ?? 128 + (signal ? constants.signals[signal] : 0)));
  });
}

export async function benchCommand(scenarios: string[], flags: BenchFlags): Promise<void> {
  if (scenarios.length > 0) {
    // Before the benchmarks load: the run that measures loads them itself.
    const nodeFlags = loadGeneratorFlags(process.execArgv);
    const env = loadGeneratorEnvironment(process.env);
    if (nodeFlags.length !== process.execArgv.length || Object.keys(env).length !== Object.keys(process.env).length) {
      process.exit(await runAgainWith(nodeFlags, env));
    }
  }
  const runner = loadRunner();
  if (scenarios.length === 0) {
    process.stdout.write(runner.formatListing());
    return;
  }
  const known = runner.SCENARIOS.map((s) => s.name);
  const names = scenarios.includes('all') ? known : scenarios;
  for (const name of names) {
    if (!known.includes(name)) throw new UsageError(`unknown scenario "${name}"; one of: ${known.join(', ')}, or all`);
  }
  if (flags.key.length > 0 && !flags.url) throw new UsageError('--key goes with --url (the scenarios seed their own keys otherwise)');
  const options: RunOptions = {
    duration: flags.duration,
    connections: flags.connections,
    threads: flags.threads ?? 1,
    rounds: flags.rounds,
    url: flags.url,
    keys: flags.key,
    quick: flags.quick,
    json: flags.json,
  };
  const code = await runner.runBench([...new Set(names)], options);
  process.exit(code);
}
