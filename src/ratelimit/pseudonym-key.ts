// The key of client pseudonyms (core/client-pseudonym.ts) in the hot store: one for every thread
// and process on the data directory, so that a client's wrong passwords count together whichever
// of them answers; made when there is none, and replaced once it is an hour old, so that a key on
// disk never outlives the hour (the records keyed with it live for minutes: links/module.ts
// forgets them once they are full again). A replaced key starts every client's count afresh.
import { PSEUDONYM_KEY_BYTES, newPseudonymKey } from '../core/client-pseudonym';
import type { HotStore, LmdbDb } from '../store/lmdb';

export const PSEUDONYM_KEY_MAX_AGE_MS = 3_600_000;
const DB = 'client_pseudonym';
const RECORD = 'key';

/** The record: the key, then when it was made (float64, ms). */
function decode(value: Buffer | undefined, nowMs: number): Buffer | null {
  if (!value || value.length !== PSEUDONYM_KEY_BYTES + 8) return null;
  const madeAt = value.readDoubleLE(PSEUDONYM_KEY_BYTES);
  // A clock set back makes a key look new: it is replaced then too.
  if (nowMs - madeAt >= PSEUDONYM_KEY_MAX_AGE_MS || madeAt > nowMs + 60_000) return null;
  return Buffer.from(value.subarray(0, PSEUDONYM_KEY_BYTES));
}

export class PseudonymKeys {
  private readonly db: LmdbDb<Buffer, string>;

  constructor(hot: HotStore) {
    this.db = hot.db<Buffer, string>(DB, { encoding: 'binary' });
  }

  /** The key in force at `nowMs`: the stored one, or a new one when it is missing or too old. */
  current(nowMs = Date.now()): Buffer {
    const key = decode(this.db.get(RECORD), nowMs);
    if (key) return key;
    // Looked at again under the write lock: another thread or process may have made it meanwhile.
    return this.db.transactionSync(() => {
      const made = decode(this.db.get(RECORD), nowMs);
      if (made) return made;
      const fresh = newPseudonymKey();
      const record = Buffer.alloc(PSEUDONYM_KEY_BYTES + 8);
      fresh.copy(record);
      record.writeDoubleLE(nowMs, PSEUDONYM_KEY_BYTES);
      this.db.putSync(RECORD, record);
      return fresh;
    });
  }
}
