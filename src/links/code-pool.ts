// The pool of pre-generated short codes, in LMDB so every thread and process draws from one pool.
// A draw removes one code inside an LMDB write transaction, so two creations can never get the
// same code and creation never checks uniqueness against existing links. Refills run in the
// background: codes are generated, registered in SQLite's issued_codes (whose primary key is the
// guarantee that no code is ever minted twice), and only the newly registered ones enter the pool.
import { generateCode, generateCodes } from '../core/short-code';
import type { HotStore, LmdbDb } from '../store/lmdb';
import type { LinkStore } from './store';

export const CODE_POOL_DB = 'link_code_pool';

export class CodePool {
  readonly db: LmdbDb<number, string>;

  constructor(hot: HotStore, private readonly codeLength = 7) {
    this.db = hot.db<number, string>(CODE_POOL_DB);
  }

  size(): number {
    this.db.resetReadTxn();
    return (this.db.getStats() as { entryCount: number }).entryCount;
  }

  /**
   * Takes one code out of the pool, or undefined when it is empty. The draw starts at a random
   * point of the (sorted) pool, so successive links do not get codes in alphabetical order.
   */
  draw(): string | undefined {
    const db = this.db;
    const start = generateCode(this.codeLength);
    return db.transactionSync(() => {
      for (const code of db.getKeys({ start, limit: 1 })) {
        db.removeSync(code);
        return code as string;
      }
      for (const code of db.getKeys({ limit: 1 })) {
        db.removeSync(code);
        return code as string;
      }
      return undefined;
    });
  }

  /**
   * Takes up to `count` codes out of the pool in one transaction (for imports, which need many),
   * from a random point of the pool on, wrapping around. Fewer when the pool holds fewer.
   */
  drawMany(count: number): string[] {
    const db = this.db;
    const start = generateCode(this.codeLength);
    return db.transactionSync(() => {
      const out: string[] = [];
      for (const code of db.getKeys({ start, limit: count })) out.push(code as string);
      if (out.length < count) for (const code of db.getKeys({ end: start, limit: count - out.length })) out.push(code as string);
      for (const code of out) db.removeSync(code);
      return out;
    });
  }

  /**
   * Removes pooled codes that are not `length` characters long: after links.code_length changed,
   * new links get codes of the new length at once instead of after the old pool is used up. The
   * removed codes stay registered as issued, so they are never minted again; returns how many.
   */
  discardOtherLengths(length: number): number {
    const db = this.db;
    return db.transactionSync(() => {
      let removed = 0;
      for (const code of db.getKeys()) {
        if ((code as string).length === length) continue;
        db.removeSync(code);
        removed++;
      }
      return removed;
    });
  }

  /**
   * Tops the pool up to `target` codes of `length` characters; returns how many were added.
   * Codes are registered in SQLite before they are pooled, so a crash in between loses codes
   * (harmless) but never duplicates one.
   */
  refill(store: LinkStore, target: number, length: number, chunk = 2000): number {
    let added = 0;
    for (let missing = target - this.size(); missing > 0; missing = target - this.size()) {
      const fresh = store.issueCodes(generateCodes(Math.min(chunk, missing), length));
      if (fresh.length === 0) break;
      this.db.transactionSync(() => {
        for (const code of fresh) this.db.putSync(code, 1);
      });
      added += fresh.length;
    }
    return added;
  }
}
