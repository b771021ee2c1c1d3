import t from 'tap';
import { BUDGET_LIMITS, budgetChange, nextBudget, takeSlot, type BudgetLimits } from '../../src/core/write-budget';

const L: BudgetLimits = { ...BUDGET_LIMITS, minBatch: 10, maxBatch: 1000, batchStep: 20, minRate: 1, maxRate: 40, rateStep: 2, deepQueue: 0.5, shallowQueue: 0.1 };

t.test('a rejection halves batch and rate', async (t) => {
  t.same(nextBudget({ batch: 100, rate: 10 }, { rejected: true }, L), { change: 'decrease', budget: { batch: 50, rate: 5 } });
  t.same(nextBudget({ batch: 51, rate: 3 }, { rejected: true }, L), { change: 'decrease', budget: { batch: 25, rate: 1.5 } }, 'batch rounds down');
  t.same(nextBudget({ batch: 15, rate: 1.5 }, { rejected: true }, L), { change: 'decrease', budget: { batch: 10, rate: 1 } }, 'never below the minimums');
});

t.test('the queue depth decides between growing, holding and halving', async (t) => {
  t.equal(budgetChange({ rejected: false, depth: 0, capacity: 1000 }, L), 'increase');
  t.equal(budgetChange({ rejected: false, depth: 100, capacity: 1000 }, L), 'increase', 'at the shallow mark');
  t.equal(budgetChange({ rejected: false, depth: 101, capacity: 1000 }, L), 'hold');
  t.equal(budgetChange({ rejected: false, depth: 499, capacity: 1000 }, L), 'hold');
  t.equal(budgetChange({ rejected: false, depth: 500, capacity: 1000 }, L), 'decrease', 'at the deep mark');
  t.equal(budgetChange({ rejected: false, depth: 0, capacity: 0 }, L), 'decrease', 'an engine with no queue is always full');
  t.same(nextBudget({ batch: 100, rate: 10 }, { rejected: false, depth: 300, capacity: 1000 }, L), { change: 'hold', budget: { batch: 100, rate: 10 } });
  t.same(nextBudget({ batch: 100, rate: 10 }, { rejected: false, depth: 600, capacity: 1000 }, L), { change: 'decrease', budget: { batch: 50, rate: 5 } });
});

t.test('growth is additive, capped at the maximums', async (t) => {
  let b = { batch: 50, rate: 5 };
  for (let i = 0; i < 3; i++) b = nextBudget(b, { rejected: false, depth: 0, capacity: 1000 }, L).budget;
  t.same(b, { batch: 110, rate: 11 });
  t.same(nextBudget({ batch: 990, rate: 39 }, { rejected: false, depth: 0, capacity: 1000 }, L).budget, { batch: 1000, rate: 40 });
  t.same(nextBudget({ batch: 1000, rate: 40 }, { rejected: false, depth: 0, capacity: 1000 }, L).budget, { batch: 1000, rate: 40 });
});

t.test('the shared schedule spaces bulk requests by the rate, with a burst allowance', async (t) => {
  const T = 1_000_000;
  t.same(takeSlot(0, T, 10, 250), { ok: true, nextMs: T + 100 }, 'the first request goes at once');
  t.same(takeSlot(T + 100, T, 10, 250), { ok: true, nextMs: T + 200 }, 'within the burst allowance');
  t.same(takeSlot(T + 250, T, 10, 250), { ok: true, nextMs: T + 350 }, 'at the edge of the allowance');
  t.same(takeSlot(T + 300, T, 10, 250), { ok: false, waitMs: 50 });
  t.same(takeSlot(T - 5000, T, 4, 250), { ok: true, nextMs: T + 250 }, 'an idle schedule does not bank requests');
});
