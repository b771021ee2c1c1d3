import t from 'tap';
import { BUDGET_LIMITS, budgetChange } from '../../src/core/write-budget';
import { loadConfig } from '../../src/config';
import { APPLY_PER_TRANSACTION } from '../../src/search/embedded-engine';
import { APPLY_WAIT_MS, INDEX_CONSUMERS, SEARCH_QUEUED_SIGNAL, applyAtDepth, applyDue, search } from '../../src/search/module';
import type { IndexResult } from '../../src/search/indexer';
import { Signals } from '../../src/server/signals';
import { signalLayout } from '../../src/capabilities';
import type { BackgroundContext } from '../../src/server/background';
import { openHotStore } from '../../src/store/lmdb';
import { tempDataDir } from '../helpers/server';
import { rmSync } from 'node:fs';

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

t.test('the apply job wakes when the indexer had writes accepted, and otherwise ticks once a second', async (t) => {
  const dir = tempDataDir('perch-apply-job-');
  const hot = openHotStore(dir);
  t.teardown(async () => {
    await hot.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const signals = Signals.allocate(signalLayout());
  const ctx = { signals, hot, config: loadConfig({ env: {} }) } as unknown as BackgroundContext;
  const queued = signals.counter(SEARCH_QUEUED_SIGNAL);
  const [indexer] = INDEX_CONSUMERS;
  const answer = (writes: number): IndexResult => ({ upTo: 10, writes, bulks: 1, rejected: writes === 0, waitMs: 0, elapsedMs: 1 });
  indexer.afterTask!(answer(0), ctx);
  t.equal(Atomics.load(queued, 0), 0, 'nothing accepted (a rejection, or only deleted posts): no wake');
  indexer.afterTask!(answer(25), ctx);
  t.equal(Atomics.load(queued, 0), 1, 'writes accepted: the signal moves');
  const apply = search.jobs!(ctx).find((j) => j.name === 'search.apply')!;
  t.equal(apply.wakeOn, queued, 'the job waits on that signal');
  t.equal(apply.everyMs, 50, 'at most once every 50 ms');
  t.equal(apply.tickMs, 1000, 'and looks once a second besides, not every period');
});

t.test('while posts keep coming, an indexing task waits at least 250 ms after the last one; a backlog does not', async (t) => {
  const gap = INDEX_CONSUMERS[0].gapMs!;
  const task = (over: Partial<IndexResult>): IndexResult => ({ upTo: 100, writes: 16, bulks: 1, rejected: false, waitMs: 0, elapsedMs: 4, ...over });
  t.equal(gap(undefined), 0, 'the first task starts at once');
  t.equal(gap(task({})), 250, 'a whole range with a stream of posts in it');
  t.equal(gap(task({ writes: 15 })), 4, 'a few posts: only the task\'s own time');
  t.equal(gap(task({ waitMs: 40 })), 44, 'stopped by the budget: its wait');
  t.equal(gap(task({ rejected: true, waitMs: 500 })), 504, 'rejected: the back-off');
  t.equal(gap(task({ elapsedMs: 300 })), 300, 'a task longer than the gap');
});
