// The search indexer's write budget: how many documents go in one bulk request (`batch`) and how
// many bulk requests may start per second (`rate`), shared by every indexing partition. It follows
// what the engine reports, additive increase, multiplicative decrease (AIMD): after each bulk
// request the engine answers with its write-queue depth, or rejects the request because the queue
// is full. A rejection, or a queue at or above the deep mark, halves both numbers; a queue at or
// below the shallow mark adds one step to each; in between they hold. Like TCP's congestion window,
// the budget keeps probing upwards while the engine keeps up and backs off fast when it does not.
//
// Bulk requests are spaced by the rate with a schedule shared by every partition (a generic cell
// rate algorithm): `nextMs` is when the next request is due; a request may start up to `burstMs`
// before that, and pushes the schedule one interval (1000 / rate ms) on. Pure.

export interface WriteBudget {
  /** Documents per bulk request. */
  batch: number;
  /** Bulk requests per second. */
  rate: number;
}

export interface BudgetLimits {
  minBatch: number;
  maxBatch: number;
  batchStep: number;
  minRate: number;
  maxRate: number;
  rateStep: number;
  /** Queue depth, as a share of its capacity, at or above which the budget is halved. */
  deepQueue: number;
  /** Queue depth, as a share of its capacity, at or below which the budget grows. */
  shallowQueue: number;
  /** How far ahead of the schedule a bulk request may start. */
  burstMs: number;
}

export const BUDGET_LIMITS: BudgetLimits = {
  minBatch: 10,
  maxBatch: 1000,
  batchStep: 20,
  minRate: 1,
  maxRate: 40,
  rateStep: 2,
  deepQueue: 0.5,
  shallowQueue: 0.1,
  burstMs: 250,
};

export const INITIAL_BUDGET: WriteBudget = { batch: 100, rate: 10 };

/** What the engine answered to one bulk request. */
export type EngineSignal = { rejected: true } | { rejected: false; depth: number; capacity: number };

export type BudgetChange = 'increase' | 'decrease' | 'hold';

export function budgetChange(signal: EngineSignal, limits: BudgetLimits): BudgetChange {
  if (signal.rejected) return 'decrease';
  const share = signal.capacity > 0 ? signal.depth / signal.capacity : 1;
  if (share >= limits.deepQueue) return 'decrease';
  if (share <= limits.shallowQueue) return 'increase';
  return 'hold';
}

/** The budget after the engine's answer to one bulk request. */
export function nextBudget(b: WriteBudget, signal: EngineSignal, limits: BudgetLimits): { budget: WriteBudget; change: BudgetChange } {
  const change = budgetChange(signal, limits);
  switch (change) {
    case 'decrease':
      return { change, budget: { batch: Math.max(limits.minBatch, Math.floor(b.batch / 2)), rate: Math.max(limits.minRate, b.rate / 2) } };
    case 'increase':
      return { change, budget: { batch: Math.min(limits.maxBatch, b.batch + limits.batchStep), rate: Math.min(limits.maxRate, b.rate + limits.rateStep) } };
    default:
      return { change, budget: b };
  }
}

export type SlotDecision = { ok: true; nextMs: number } | { ok: false; waitMs: number };

/**
 * Whether a bulk request may start at `nowMs` given the shared schedule `nextMs` (0: nothing sent
 * yet); if so, the schedule after it.
 */
export function takeSlot(nextMs: number, nowMs: number, rate: number, burstMs: number): SlotDecision {
  const earliest = nextMs - burstMs;
  if (earliest > nowMs) return { ok: false, waitMs: earliest - nowMs };
  return { ok: true, nextMs: Math.max(nextMs, nowMs) + 1000 / rate };
}
