// How a log record is written: one JSON object per line (for machines: journald, shippers,
// grep), or one human line (for a person watching a terminal):
//   13:45:00.123 INFO  listening host=127.0.0.1 port=8080 threads=1
// The time is the record's own (UTC), values that need it are JSON-quoted, and a stack follows
// on indented lines.

export type LogFormat = 'json' | 'human';
export type LogFormatSetting = LogFormat | 'auto';

/** `auto` is human on a terminal and JSON everywhere else (a pipe, a file, a service manager). */
export function resolveLogFormat(setting: LogFormatSetting, stdoutIsTerminal: boolean): LogFormat {
  if (setting === 'auto') return stdoutIsTerminal ? 'human' : 'json';
  return setting;
}

export interface LogRecord {
  time: string;
  level: string;
  msg: string;
  [field: string]: unknown;
}

/** A value as `key=value` shows it: bare when unambiguous, JSON otherwise. */
function fieldValue(v: unknown): string {
  if (typeof v === 'string') return v !== '' && /^[^\s"=\\]+$/.test(v) ? v : JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  if (v === undefined) return 'undefined';
  return JSON.stringify(v) ?? String(v);
}

export function humanLine(record: LogRecord): string {
  const { time, level, msg, stack, thread, ...fields } = record;
  const clock = typeof time === 'string' && time.length >= 23 ? time.slice(11, 23) : String(time);
  let line = `${clock} ${level.toUpperCase().padEnd(5)} `;
  if (typeof thread === 'number' && thread !== 0) line += `[${thread}] `;
  line += msg;
  for (const [k, v] of Object.entries(fields)) line += ` ${k}=${fieldValue(v)}`;
  if (typeof stack === 'string') line += '\n' + stack.split('\n').map((l) => '    ' + l.trim()).join('\n');
  return line;
}

export function formatRecord(record: LogRecord, format: LogFormat): string {
  return format === 'human' ? humanLine(record) : JSON.stringify(record);
}
