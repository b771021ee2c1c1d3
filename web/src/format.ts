// Dates and numbers as people read them, and the conversions of the expiry inputs.

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dayOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' });

export function formatDateTime(iso: string): string {
  return dateTime.format(new Date(iso));
}

/** A `YYYY-MM-DD` UTC day of the click statistics. */
export function formatDay(day: string): string {
  return dayOnly.format(new Date(day + 'T00:00:00Z'));
}

/** "3 likes", "1 like". */
export function plural(n: number, one: string, many = one + 's'): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** A moment as a `datetime-local` input value, in the browser's time zone. */
export function toLocalInput(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A `datetime-local` value (browser time zone) as ISO 8601 UTC; null when empty or invalid. */
export function fromLocalInput(value: string): string | null {
  if (!value) return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/** Whether post id `a` is newer than `b` (ids are 64-bit, time-sortable, decimal strings). */
export function isNewer(a: string, b: string): boolean {
  return a.length !== b.length ? a.length > b.length : a > b;
}
