// The current time as the ISO 8601 text that rows and answers carry.

let lastMs = Number.NaN;
let lastText = '';

/**
 * `new Date().toISOString()`, made once per millisecond: under load a thread stamps tens of
 * writes in the same millisecond, and formatting the date was a measurable part of each.
 */
export function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastText = new Date(ms).toISOString();
  }
  return lastText;
}
