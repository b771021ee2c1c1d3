// The indexing throttle with an engine set to reject: the shared budget halves on every
// rejection and grows back additively while the queue is shallow; the partitions' positions move
// only past accepted writes; and every post is indexed exactly once, none dropped. Runs the real
// dispatcher, indexer, budget (LMDB) and engine (search.db), with the engine's test seam.
import t from 'tap';
import { dispatchOutbox, type OutboxConsumer } from '../../src/outbox/consumer';
import { outboxOf } from '../../src/outbox/store';
import type { BackgroundContext } from '../../src/server/background';
import { groupCommit, groupWriterClient } from '../helpers/store';
import { SharedBudget, type BudgetRecord } from '../../src/search/budget';
import { BUDGET_LIMITS, INITIAL_BUDGET } from '../../src/core/write-budget';
import { INDEX_PARTITIONS, indexRange, type IndexResult } from '../../src/search/indexer';
import { IndexSourceStore } from '../../src/search/store';
import type { BulkAnswer, IndexOp, QueueState, SearchEngine } from '../../src/search/engine';
import { ftsMatchExpression } from '../../src/core/search-query';
import { EmbeddedEngine } from '../../src/search/embedded-engine';
import { ALICE, searchFixture } from './helpers';

/** Records every answer the engine gave, and the budget before and after each. */
class RecordingBudget extends SharedBudget {
  readonly log: Array<{ before: BudgetRecord; answer: BulkAnswer; after: BudgetRecord }> = [];
  override record(answer: BulkAnswer, writes: number): BudgetRecord {
    const before = this.read();
    const after = super.record(answer, writes);
    this.log.push({ before, answer, after });
    return after;
  }
}

class RecordingEngine implements SearchEngine {
  readonly accepted: IndexOp[] = [];
  constructor(private readonly inner: SearchEngine) {}
  async bulk(ops: readonly IndexOp[]): Promise<BulkAnswer> {
    const answer = await this.inner.bulk(ops);
    if (answer.accepted) this.accepted.push(...ops);
    return answer;
  }
  queueState(): Promise<QueueState> {
    return this.inner.queueState();
  }
}

t.test('rejections halve the budget, healthy answers grow it back, and every post is indexed once', async (t) => {
  let requests = 0;
  const rejectAt = new Set([2, 3, 7]);
  const f = await searchFixture(t, { rejectWhen: () => rejectAt.has(++requests) });
  const ids = f.post(ALICE, Array.from({ length: 600 }, (_, i) => `throttled post number ${i}`), 5000n);
  // The schedule never makes a partition wait here: only the engine's answers drive the budget.
  const budget = new RecordingBudget(f.hot, { ...BUDGET_LIMITS, burstMs: 1e12 });
  budget.reset();
  const engine = new RecordingEngine(f.engine);
  const source = new IndexSourceStore(f.db);
  const group = groupCommit(f.db);
  const writes = groupWriterClient(group);
  const results: Array<{ range: { after: number; upTo: number }; result: IndexResult }> = [];
  const consumers: Array<OutboxConsumer<IndexResult>> = Array.from({ length: INDEX_PARTITIONS }, (_, p) => ({
    name: `throttle_test_${p}`,
    tasks: { index: async (_ctx: unknown, range: { after: number; upTo: number }) => indexRange({ source, engine, budget }, range, p) },
    task: 'index',
    batch: 2000,
    everyMs: 10,
    doneUpTo: (r) => r.upTo,
  }));
  const ctx = {
    sqlite: f.db,
    writes,
    runTask: async (table: Record<string, (c: unknown, p: unknown) => Promise<IndexResult>>, name: string, payload: unknown) => {
      const result = await table[name](null, payload);
      results.push({ range: payload as { after: number; upTo: number }, result });
      return result;
    },
  } as unknown as BackgroundContext;
  const outbox = outboxOf(f.db);
  // Partitions take turns, as two pool threads would; bounded, since every turn either finishes
  // a partition's range or meets one of the three rejections.
  for (let turn = 0; turn < 20; turn++) {
    for (const c of consumers) await dispatchOutbox(c, ctx);
    if (consumers.every((c) => outbox.position(c.name) === outbox.newest())) break;
  }
  t.same(
    consumers.map((c) => outbox.position(c.name)),
    consumers.map(() => outbox.newest()),
    'every partition reached the end',
  );

  const log = budget.log;
  t.equal(log.filter((e) => !e.answer.accepted).length, 3, 'three requests were rejected');
  // The first request goes with the initial budget and is accepted with a shallow queue.
  t.same([log[0].before.batch, log[0].before.rate], [INITIAL_BUDGET.batch, INITIAL_BUDGET.rate]);
  t.same([log[0].after.batch, log[0].after.rate], [120, 12], 'additive increase: +20 writes, +2 requests/s');
  t.same([log[1].after.batch, log[1].after.rate], [60, 6], 'the first rejection halves both');
  t.same([log[2].after.batch, log[2].after.rate], [30, 3], 'and the second halves them again');
  for (const [i, e] of log.entries()) {
    const { before, after, answer } = e;
    if (!answer.accepted) {
      t.same([after.batch, after.rate], [Math.max(10, Math.floor(before.batch / 2)), Math.max(1, before.rate / 2)], `request ${i + 1}: halved`);
    } else {
      t.ok(answer.depth <= answer.capacity * BUDGET_LIMITS.shallowQueue, 'the queue stayed shallow');
      t.same([after.batch, after.rate], [Math.min(1000, before.batch + 20), Math.min(40, before.rate + 2)], `request ${i + 1}: grew by one step`);
    }
  }
  t.ok(log.slice(7).length > 0 && log.slice(7).every((e) => e.answer.accepted), 'after the last rejection, growth resumes');
  const stopped = results.filter((r) => r.result.rejected);
  t.equal(stopped.length, 3);
  t.ok(stopped.every((r) => r.result.upTo < r.range.upTo && r.result.waitMs > 0), 'each rejected task stopped short of its range, with a back-off');

  // Every post was accepted exactly once, and each is in the index once the queue is applied.
  const counts = new Map<string, number>();
  for (const op of engine.accepted) counts.set(op.id, (counts.get(op.id) ?? 0) + 1);
  t.equal(counts.size, ids.length);
  t.ok([...counts.values()].every((n) => n === 1), 'no post accepted twice');
  t.ok(ids.every((id) => counts.has(id)), 'no post dropped');
  t.equal(f.engine.applyQueued(10_000), ids.length);
  t.equal(f.engine.store.queueDepth(), 0);
  t.equal(f.engine.store.documents(), ids.length);
  t.equal(f.engine.store.recent(ftsMatchExpression(['throttled'])!, 1n << 62n, 1000).length, ids.length);
  t.same(f.engine.store.recent(ftsMatchExpression(['number', '599'])!, 1n << 62n, 10), [5599n]);
  t.equal(budget.read().rejections, 3);
  t.equal(budget.read().accepted, ids.length);
});

t.test('a full queue rejects whole requests; applying it makes room again', async (t) => {
  const f = await searchFixture(t, { capacity: 1000 });
  const ops = (from: number, n: number): IndexOp[] => Array.from({ length: n }, (_, i) => ({ op: 'index', id: String(from + i), text: `text ${from + i}` }));
  t.same(await f.engine.bulk(ops(1, 600)), { accepted: true, depth: 0, capacity: 1000 }, 'the depth the request found');
  t.same(await f.engine.bulk(ops(601, 401)), { accepted: false, reason: 'queue_full', depth: 600, capacity: 1000 }, 'would exceed: nothing written');
  t.same(await f.engine.queueState(), { depth: 600, capacity: 1000 });
  t.same(await f.engine.bulk(ops(601, 400)), { accepted: true, depth: 600, capacity: 1000 }, 'fills it exactly');
  t.same(await f.engine.queueState(), { depth: 1000, capacity: 1000 });
  t.equal(f.engine.applyQueued(10_000, 300), 1000, 'applied in transactions of 300');
  t.same(await f.engine.queueState(), { depth: 0, capacity: 1000 });
  t.same(await f.engine.bulk([{ op: 'delete', id: '5' }, { op: 'index', id: '6', text: 'replaced' }]), { accepted: true, depth: 0, capacity: 1000 });
  f.engine.applyQueued(1000);
  t.equal(f.engine.store.documents(), 999);
  t.same(f.engine.store.recent('"replaced"', 1n << 62n, 10), [6n]);
  t.same(f.engine.store.recent('"text"', 8n, 10), [7n, 4n, 3n, 2n, 1n], 'deleted and replaced posts no longer match');
});

t.test('an engine locked by another writer answers unavailable, which the indexer treats as a rejection', async (t) => {
  const f = await searchFixture(t);
  const locked = EmbeddedEngine.open(f.dir, { capacity: 20_000, busyTimeoutMs: 50 });
  t.teardown(() => locked.close());
  f.post(ALICE, ['one', 'two', 'three'], 100n);
  f.engine.store.db.exec('BEGIN IMMEDIATE');
  const budget = new SharedBudget(f.hot, { ...BUDGET_LIMITS, burstMs: 1e12 });
  budget.reset();
  const source = new IndexSourceStore(f.db);
  const results = [];
  for (let p = 0; p < INDEX_PARTITIONS; p++) results.push(await indexRange({ source, engine: locked, budget }, { after: 0, upTo: 3 }, p));
  const withWrites = results.filter((r) => r.bulks > 0);
  t.ok(withWrites.length > 0);
  for (const r of withWrites) {
    t.equal(r.rejected, true);
    t.equal(r.writes, 0);
    t.ok(r.waitMs > 0, 'a back-off before the next try');
  }
  t.equal(budget.read().rejections, withWrites.length);
  f.engine.store.db.exec('COMMIT');
  const retry = await indexRange({ source, engine: locked, budget }, { after: 0, upTo: 3 }, 0);
  t.equal(retry.rejected, false);
  t.equal(retry.upTo, 3);
});
