// The indexer's write budget, shared by every indexing partition (and every thread and process on
// the box) in one LMDB record, changed only inside LMDB write transactions so that concurrent
// partitions never lose each other's updates. The arithmetic is core/write-budget.ts; this keeps
// the state: the budget, the schedule of bulk requests, and counters for /metrics.
import { BUDGET_LIMITS, INITIAL_BUDGET, nextBudget, takeSlot, type BudgetLimits, type WriteBudget } from '../core/write-budget';
import type { HotStore, LmdbDb } from '../store/lmdb';
import type { BulkAnswer } from './engine';

export interface BudgetRecord extends WriteBudget {
  /** When the next bulk request is due (core/write-budget.ts, takeSlot); 0 before the first. */
  nextMs: number;
  /** Bulk requests answered, writes accepted, and requests rejected, since the record was made. */
  bulks: number;
  accepted: number;
  rejections: number;
  decreases: number;
  increases: number;
}

const KEY = 'budget';

export function initialBudgetRecord(): BudgetRecord {
  return { ...INITIAL_BUDGET, nextMs: 0, bulks: 0, accepted: 0, rejections: 0, decreases: 0, increases: 0 };
}

export class SharedBudget {
  private readonly db: LmdbDb<BudgetRecord, string>;

  constructor(
    hot: HotStore,
    readonly limits: BudgetLimits = BUDGET_LIMITS,
  ) {
    this.db = hot.db<BudgetRecord, string>('search_index_budget');
  }

  read(): BudgetRecord {
    return this.db.get(KEY) ?? initialBudgetRecord();
  }

  /**
   * How long until the schedule's next slot is due at `nowMs` (0: now), read without taking it: a
   * partition looks before it reads the writes it would send, so that it reads nothing it then
   * may not send. Another partition may still take the slot first; `take` decides.
   */
  dueInMs(nowMs = Date.now()): number {
    const r = this.read();
    const slot = takeSlot(r.nextMs, nowMs, r.rate, this.limits.burstMs);
    return slot.ok ? 0 : slot.waitMs;
  }

  /** Takes the schedule's next slot for one bulk request at `nowMs`, or says how long to wait. */
  take(nowMs = Date.now()): { ok: true; budget: WriteBudget } | { ok: false; waitMs: number } {
    const db = this.db;
    return db.transactionSync(() => {
      const r = db.get(KEY) ?? initialBudgetRecord();
      const slot = takeSlot(r.nextMs, nowMs, r.rate, this.limits.burstMs);
      if (!slot.ok) return slot;
      db.putSync(KEY, { ...r, nextMs: slot.nextMs });
      return { ok: true as const, budget: { batch: r.batch, rate: r.rate } };
    });
  }

  /** Adapts the budget to the engine's answer to a bulk request of `writes` writes; returns the new record. */
  record(answer: BulkAnswer, writes: number): BudgetRecord {
    const db = this.db;
    return db.transactionSync(() => {
      const r = db.get(KEY) ?? initialBudgetRecord();
      const signal = answer.accepted ? { rejected: false as const, depth: answer.depth, capacity: answer.capacity } : { rejected: true as const };
      const { budget, change } = nextBudget(r, signal, this.limits);
      const next: BudgetRecord = {
        ...r,
        ...budget,
        bulks: r.bulks + 1,
        accepted: r.accepted + (answer.accepted ? writes : 0),
        rejections: r.rejections + (answer.accepted ? 0 : 1),
        decreases: r.decreases + (change === 'decrease' ? 1 : 0),
        increases: r.increases + (change === 'increase' ? 1 : 0),
      };
      db.putSync(KEY, next);
      return next;
    });
  }

  /** Starts over from the initial budget (tests, and the benchmarks between runs). */
  reset(record: BudgetRecord = initialBudgetRecord()): void {
    this.db.putSync(KEY, record);
  }
}
