// Opaque list cursors. A cursor names the list it belongs to and a position in it, and carries a
// MAC under a key of this installation (server_secrets, made when the database is created), so
// that only strings the server issued are accepted: a typed, truncated or forged cursor, or one
// taken from another list, is answered with 400 instead of being misread.
import { createHmac } from 'node:crypto';

/** Characters of the MAC kept in a cursor: 16 base64url characters, 96 bits. */
const MAC_LENGTH = 16;
const POSITION_PART = /^(0|[1-9][0-9]{0,18})$/;

export class CursorCodec {
  constructor(private readonly key: Buffer) {
    if (key.length < 16) throw new Error('a cursor key needs at least 16 bytes');
  }

  /** Encodes `position` (decimal id strings) for the list `kind`. */
  encode(kind: string, position: string[]): string {
    const body = Buffer.from(position.join('.'), 'utf8').toString('base64url');
    return body + '~' + this.mac(kind, body);
  }

  /** The position of a cursor of list `kind` with `parts` parts, or null when the server did not issue it. */
  decode(kind: string, cursor: string, parts: number): string[] | null {
    const tilde = cursor.indexOf('~');
    if (tilde <= 0 || tilde !== cursor.lastIndexOf('~')) return null;
    const body = cursor.slice(0, tilde);
    if (cursor.slice(tilde + 1) !== this.mac(kind, body)) return null;
    const position = Buffer.from(body, 'base64url').toString('utf8').split('.');
    if (position.length !== parts || position.some((p) => !POSITION_PART.test(p))) return null;
    return position;
  }

  private mac(kind: string, body: string): string {
    return createHmac('sha256', this.key).update(kind).update('\0').update(body).digest('base64url').slice(0, MAC_LENGTH);
  }
}
