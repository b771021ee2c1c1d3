// What perch keeps of a client's address where it must key something on it (the wrong-password
// limit of a protected link, in LMDB): a keyed hash, never the address. The key is made at each
// server start and held only in memory, so what is on disk cannot be tied back to an address, not
// even by someone with the data directory and every address there is to try. The records keyed
// this way live for minutes; a restart starting them afresh costs nothing worth keeping.
import { createHmac, randomBytes } from 'node:crypto';

/** A new key for clientPseudonym, one per server run, shared by its HTTP threads. */
export function newPseudonymKey(): Uint8Array {
  return new Uint8Array(randomBytes(32));
}

/** The keyed hash of a client address: 128 bits, base64url. */
export function clientPseudonym(key: Uint8Array, address: string): string {
  return createHmac('sha256', key).update(address).digest('base64url').slice(0, 22);
}
