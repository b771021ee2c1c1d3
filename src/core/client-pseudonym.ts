// What perch keeps of a client's address where it must key something on it (the wrong-password
// limit of a protected link, in LMDB): a keyed hash, never the address. The key is shared by every
// thread and process on the data directory and replaced every hour (ratelimit/pseudonym-key.ts),
// and the records keyed this way live for minutes, so what is on disk can be tied back to an
// address only with the key of the hour, and only for the clients of the last minutes.
import { createHmac, randomBytes } from 'node:crypto';

export const PSEUDONYM_KEY_BYTES = 32;

/** A new key for clientPseudonym. */
export function newPseudonymKey(): Buffer {
  return randomBytes(PSEUDONYM_KEY_BYTES);
}

/** The keyed hash of a client address: 128 bits, base64url. */
export function clientPseudonym(key: Uint8Array, address: string): string {
  return createHmac('sha256', key).update(address).digest('base64url').slice(0, 22);
}
