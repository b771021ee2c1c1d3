// Structured logs: one JSON object per line on stdout, so that an operator can grep or ship them.
import { threadId } from 'node:worker_threads';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

let threshold = RANK.info;

export function setLogLevel(level: LogLevel): void {
  threshold = RANK[level];
}

function write(level: Exclude<LogLevel, 'silent'>, msg: string, fields?: Record<string, unknown>, always = false): void {
  if (RANK[level] < threshold && !(always && threshold < RANK.silent)) return;
  const line = JSON.stringify({ time: new Date().toISOString(), level, msg, thread: threadId, ...fields });
  process.stdout.write(line + '\n');
}

export const log = {
  debug: (msg: string, fields?: Record<string, unknown>) => write('debug', msg, fields),
  info: (msg: string, fields?: Record<string, unknown>) => write('info', msg, fields),
  warn: (msg: string, fields?: Record<string, unknown>) => write('warn', msg, fields),
  error: (msg: string, fields?: Record<string, unknown>) => write('error', msg, fields),
  /** Life-cycle events an operator always wants (listening, stopped), at any level but silent. */
  notice: (msg: string, fields?: Record<string, unknown>) => write('info', msg, fields, true),
};

/** Renders an error for a log line: message and stack, never sent to clients. */
export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { error: err.message, stack: err.stack };
  return { error: String(err) };
}
