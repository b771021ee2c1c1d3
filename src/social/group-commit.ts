// Group commit: durable writes requested during one event-loop turn of a thread run in a single
// SQLite transaction, so one sync to disk acknowledges all of them. Each write runs in its own
// savepoint, so one that fails (a validation error found inside the transaction) rolls back alone
// and is answered with its error while the others commit. Nothing is answered before the commit.
import type { Transaction } from 'better-sqlite3';
import type { Sqlite } from '../store/sqlite';

interface Pending {
  op: () => unknown;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;
  private readonly batch: Transaction<(ops: Pending[], out: Outcome[]) => void>;
  private readonly savepoint: (op: () => unknown) => unknown;
  /** Transactions committed and writes they carried, for metrics and benchmarks. */
  readonly stats = { commits: 0, writes: 0 };

  constructor(db: Sqlite) {
    this.savepoint = db.transaction((op: () => unknown) => op());
    this.batch = db.transaction((ops: Pending[], out: Outcome[]) => {
      for (const p of ops) {
        try {
          out.push({ ok: true, value: this.savepoint(p.op) });
        } catch (error) {
          out.push({ ok: false, error });
        }
      }
    });
  }

  /** Runs `op` inside the next group transaction; resolves after that transaction is committed. */
  run<T>(op: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ op, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const ops = this.queue;
    this.queue = [];
    const out: Outcome[] = [];
    try {
      this.batch.immediate(ops, out);
    } catch (err) {
      for (const p of ops) p.reject(err);
      return;
    }
    this.stats.commits++;
    this.stats.writes += ops.length;
    for (let i = 0; i < ops.length; i++) {
      const o = out[i];
      if (o.ok) ops[i].resolve(o.value);
      else ops[i].reject(o.error);
    }
  };
}
