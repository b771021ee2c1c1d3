// Logs on stdout: one JSON object per line (so that an operator can grep or ship them), or one
// human line per record when `log.format` says so (by default when stdout is a terminal; the
// supervisor decides and every thread follows, core/log-line.ts).
import { threadId } from 'node:worker_threads';
import { formatRecord, type LogFormat } from './core/log-line';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

let threshold = RANK.info;
/**
 * The variable that carries the resolved format to every thread: `perch serve` resolves
 * log.format once, on the main thread (a worker's stdout is never a terminal), and sets it
 * before any thread starts; threads start with a copy of the environment.
 */
export const LOG_FORMAT_VARIABLE = 'PERCH_LOG_FORMAT';
let format: LogFormat = process.env[LOG_FORMAT_VARIABLE] === 'human' ? 'human' : 'json';

export function setLogLevel(level: LogLevel): void {
  threshold = RANK[level];
}

export function setLogFormat(f: LogFormat): void {
  format = f;
}

/** Level and format at once; `format` is a resolved one (never `auto`) when it is given. */
export function configureLog(settings: { level: LogLevel; format?: LogFormat | 'auto' }): void {
  setLogLevel(settings.level);
  if (settings.format === 'json' || settings.format === 'human') setLogFormat(settings.format);
}

function write(level: Exclude<LogLevel, 'silent'>, msg: string, fields?: Record<string, unknown>, always = false): void {
  if (RANK[level] < threshold && !(always && threshold < RANK.silent)) return;
  const line = formatRecord({ time: new Date().toISOString(), level, msg, thread: threadId, ...fields }, format);
  process.stdout.write(line + '\n');
}

export const log = {
  debug: (msg: string, fields?: Record<string, unknown>) => write('debug', msg, fields),
  info: (msg: string, fields?: Record<string, unknown>) => write('info', msg, fields),
  warn: (msg: string, fields?: Record<string, unknown>) => write('warn', msg, fields),
  error: (msg: string, fields?: Record<string, unknown>) => write('error', msg, fields),
  /** Life-cycle events an operator always wants (listening, stopped), at any level but silent. */
  notice: (msg: string, fields?: Record<string, unknown>) => write('info', msg, fields, true),
  /**
   * One line per answered request, when `log.access` is on: the operator asked for them, so they
   * are written at any level but silent.
   */
  access: (fields: Record<string, unknown>) => write('info', 'request', fields, true),
};

/** Renders an error for a log line: message and stack, never sent to clients. */
export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { error: err.message, stack: err.stack };
  return { error: String(err) };
}
