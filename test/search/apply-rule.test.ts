import t from 'tap';
import { BUDGET_LIMITS, budgetChange } from '../../src/core/write-budget';
import { loadConfig } from '../../src/config';
import { APPLY_PER_TRANSACTION } from '../../src/search/embedded-engine';
import { APPLY_WAIT_MS, applyAtDepth, applyDue } from '../../src/search/module';

t.test('writes are applied at once when a tenth of the queue waits, a transaction at most', async (t) => {
  t.equal(APPLY_PER_TRANSACTION, 5000);
  t.equal(BUDGET_LIMITS.shallowQueue, 0.1, 'up to a tenth of the queue the budget keeps growing');
  t.equal(loadConfig({ env: {} }).search.queue_capacity, 50_000, 'the default queue');
  t.equal(applyAtDepth(50_000), 5000, 'the default queue: a transaction');
  t.equal(applyAtDepth(20_000), 2000);
  t.equal(applyAtDepth(1_000_000), 5000, 'never more than a transaction');
  t.equal(applyAtDepth(1000), 100, 'the smallest queue the configuration allows');
  t.equal(budgetChange({ rejected: false, depth: applyAtDepth(50_000), capacity: 50_000 }, BUDGET_LIMITS), 'increase', 'what waits for its apply is no backlog to the budget');
});

t.test('fewer writes wait until they have waited long enough', async (t) => {
  t.equal(APPLY_WAIT_MS, 250);
  t.equal(applyDue(1, 0, 5000, false), false, 'one write just seen');
  t.equal(applyDue(4999, APPLY_WAIT_MS - 1, 5000, false), false);
  t.equal(applyDue(1, APPLY_WAIT_MS, 5000, false), true, 'one write, waited long enough');
  t.equal(applyDue(5000, 0, 5000, false), true, "a transaction's worth");
  t.equal(applyDue(1, 0, 5000, true), true, 'the last run at shutdown leaves nothing queued');
  t.equal(applyDue(0, 10_000, 5000, true), false, 'an empty queue never');
});
