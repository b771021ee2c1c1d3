// Opaque cursors of the link list: the position (a link's numeric id) plus a checksum bound to the
// list and its owner, so a string the server did not issue, or one taken from another user's list,
// is recognised and answered with 400. The checksum is not a secret; forging one only yields a
// position in the caller's own list.
import { createHash } from 'node:crypto';

function checksum(scope: string, body: string): string {
  return createHash('sha256').update('links\0').update(scope).update('\0').update(body).digest('base64url').slice(0, 12);
}

export function encodeLinkCursor(scope: string, id: string): string {
  const body = Buffer.from(id, 'utf8').toString('base64url');
  return body + '.' + checksum(scope, body);
}

/** The id a cursor points after, or null when the cursor was not issued for this scope. */
export function decodeLinkCursor(scope: string, cursor: string): string | null {
  const dot = cursor.indexOf('.');
  if (dot <= 0 || dot !== cursor.lastIndexOf('.')) return null;
  const body = cursor.slice(0, dot);
  if (cursor.slice(dot + 1) !== checksum(scope, body)) return null;
  const id = Buffer.from(body, 'base64url').toString('utf8');
  return /^(0|[1-9][0-9]{0,18})$/.test(id) ? id : null;
}
