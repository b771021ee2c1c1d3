// Group commit: the writer runs every operation that has arrived, from every client, in one
// SQLite transaction, and answers them once a sync of the log covers its commit (writer.ts). A
// write that fails (a check made inside the transaction) rolls back alone and is answered with its
// error while the others commit. While a sync runs new writes queue up (the writer commits them
// when it ends), so groups grow with load.
import type { Transaction } from 'better-sqlite3';
import { isBusy, type Sqlite } from '../store/sqlite';
import type { WriteExecutor } from './operations';
import type { Outcome } from './protocol';

/**
 * After a batch had to run twice, this many following batches run with savepoints at once: a
 * stream of failing writes (likes of a deleted post, say) then costs the savepoints, about a
 * tenth more, instead of every batch it lands in running twice.
 */
export const ISOLATED_AFTER_RERUN = 64;

/**
 * The writer's side: runs a batch of operations in one synced transaction. A batch first runs
 * plainly, all writes in one go; if any write fails, that attempt is rolled back as a whole and
 * the batch runs again with a savepoint per write, so the failing write rolls back alone. Writes
 * are deterministic in the store's state and their arguments (ids and times are minted before),
 * so the second run answers exactly as the first would have. Savepoints cost about a tenth of
 * the writer's time per post, and most batches hold no failing write; while failing writes keep
 * coming (ISOLATED_AFTER_RERUN), batches skip the plain attempt. The plain attempt also runs each
 * run of consecutive writes that has a bulk form (plain posts) in one call.
 */
export class GroupCommit {
  private readonly plain: Transaction<(ops: Array<[string, unknown]>, out: Outcome[]) => void>;
  private readonly isolated: Transaction<(ops: Array<[string, unknown]>, out: Outcome[]) => void>;
  /**
   * Transactions committed, writes they carried, batches that needed the second run, and batches
   * run with savepoints from the start.
   */
  readonly stats = { commits: 0, writes: 0, reruns: 0, isolated: 0 };
  /** Batches still to run with savepoints from the start, after the last rerun. */
  private isolatedLeft = 0;

  constructor(db: Sqlite, exec: WriteExecutor) {
    this.plain = db.transaction((ops: Array<[string, unknown]>, out: Outcome[]) => {
      for (let i = 0; i < ops.length; ) {
        const [name, args] = ops[i];
        // A run of consecutive writes that have a bulk form goes in one call.
        let end = i + 1;
        if (exec.bulkable(name, args)) while (end < ops.length && ops[end][0] === name && exec.bulkable(name, ops[end][1])) end++;
        if (end - i === 1) {
          out.push({ ok: true, value: exec(name, args) });
        } else {
          for (const value of exec.bulk(name, ops.slice(i, end).map((op) => op[1]))) out.push({ ok: true, value });
        }
        i = end;
      }
    });
    const savepoint = db.transaction(exec);
    this.isolated = db.transaction((ops: Array<[string, unknown]>, out: Outcome[]) => {
      for (const [name, args] of ops) {
        try {
          out.push({ ok: true, value: savepoint(name, args) });
        } catch (error) {
          out.push({ ok: false, error });
        }
      }
    });
  }

  /**
   * One outcome per operation, in order; none is final before the commit returns. Throws
   * SQLITE_BUSY when another connection holds the write lock (nothing ran): try again later.
   */
  commit(ops: Array<[string, unknown]>): Outcome[] {
    let out: Outcome[] = [];
    if (this.isolatedLeft > 0) {
      const result = this.runIsolated(ops, out);
      if (result) return result;
      this.isolatedLeft--;
      this.stats.isolated++;
    } else {
      try {
        this.plain.immediate(ops, out);
      } catch (error) {
        if (isBusy(error)) throw error;
        // Rolled back whole: run again with each write isolated.
        this.stats.reruns++;
        this.isolatedLeft = ISOLATED_AFTER_RERUN;
        out = [];
        const result = this.runIsolated(ops, out);
        if (result) return result;
      }
    }
    this.stats.commits++;
    this.stats.writes += ops.length;
    return out;
  }

  /** Runs the batch with a savepoint per write into `out`; returns outcomes only if the whole failed. */
  private runIsolated(ops: Array<[string, unknown]>, out: Outcome[]): Outcome[] | null {
    try {
      this.isolated.immediate(ops, out);
      return null;
    } catch (error) {
      if (isBusy(error)) throw error;
      // The transaction as a whole failed (disk full, I/O error): nothing of it committed.
      return ops.map(() => ({ ok: false, error }));
    }
  }
}
