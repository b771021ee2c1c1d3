// Plain-text output of the CLI: aligned columns and human durations (sizes: core/human-bytes.ts).

/** Rows as lines whose columns line up (two spaces between); the last column is not padded. */
export function alignColumns(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]))).join('  '));
}

/** A duration as its two largest units: `45s`, `3m 05s`, `2h 07m`, `4d 03h`. */
export function humanDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const pad = (x: number) => String(x).padStart(2, '0');
  if (d > 0) return `${d}d ${pad(h)}h`;
  if (h > 0) return `${h}h ${pad(m)}m`;
  if (m > 0) return `${m}m ${pad(s % 60)}s`;
  return `${s}s`;
}

/**
 * Text from a file or a user, made safe for a terminal: control characters (C0, DEL, C1) as
 * `\u001b`-style escapes, so an escape sequence in an imported file cannot clear the screen or
 * print a line of its own.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
