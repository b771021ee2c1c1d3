// Opaque list cursors. A cursor names the list it belongs to and a position in it, and carries a
// checksum so that a string the server never issued (typed, truncated, taken from another list)
// is recognised and answered with 400 instead of being silently misread. The checksum is not a
// secret: forging a cursor only gets a client a position it could have paged to anyway.
import { createHash } from 'node:crypto';

const CHECK_LENGTH = 10;

function check(kind: string, body: string): string {
  return createHash('sha256').update(kind).update('\0').update(body).digest('base64url').slice(0, CHECK_LENGTH);
}

/** Encodes `position` (decimal id strings) for the list `kind`. */
export function encodeCursor(kind: string, position: string[]): string {
  const body = Buffer.from(position.join('.'), 'utf8').toString('base64url');
  return body + '~' + check(kind, body);
}

/** The position of a cursor of list `kind`, or null when the server did not issue it. */
export function decodeCursor(kind: string, cursor: string, parts: number): string[] | null {
  const tilde = cursor.indexOf('~');
  if (tilde <= 0 || tilde !== cursor.lastIndexOf('~')) return null;
  const body = cursor.slice(0, tilde);
  if (cursor.slice(tilde + 1) !== check(kind, body)) return null;
  const position = Buffer.from(body, 'base64url').toString('utf8').split('.');
  if (position.length !== parts || position.some((p) => !/^(0|[1-9][0-9]{0,18})$/.test(p))) return null;
  return position;
}
