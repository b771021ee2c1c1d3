// The indexing partitions below the dispatcher: which events a partition reads, that a task
// reads no further than the budget lets it send, and that applying leaves the engine's
// connection synced as it was.
import t from 'tap';
import { partitionOf } from '../../src/core/partition';
import { BUDGET_LIMITS } from '../../src/core/write-budget';
import { SharedBudget, initialBudgetRecord } from '../../src/search/budget';
import { indexRange } from '../../src/search/indexer';
import { IndexSourceStore, QUEUE_DEPTH_SQL, QUEUE_HEAD_SQL } from '../../src/search/store';
import { ftsMatchExpression } from '../../src/core/search-query';
import { outboxOf } from '../../src/outbox/store';
import { ALICE, searchFixture } from './helpers';
import { queryPlan } from '../helpers/store';

/** Counts the events read through it. */
class CountingSource extends IndexSourceStore {
  rows = 0;
  override postEvents(after: number, upTo: number, partition?: number, partitions?: number, limit?: number) {
    const rows = super.postEvents(after, upTo, partition, partitions, limit);
    this.rows += rows.length;
    return rows;
  }
}

t.test('a partition reads only its own post events, in order, at most the limit', async (t) => {
  const f = await searchFixture(t);
  const ids = f.post(ALICE, Array.from({ length: 40 }, (_, i) => `post ${i}`), 7205759403792793600n);
  f.remove(ALICE, ids[3]);
  const source = new IndexSourceStore(f.db);
  const all = source.postEvents(0, 1000);
  t.equal(all.length, 41, 'forty creations and a deletion');
  const seen: number[] = [];
  for (let p = 0; p < 2; p++) {
    const mine = source.postEvents(0, 1000, p, 2);
    t.ok(mine.length > 0 && mine.every(([, , id]) => partitionOf(BigInt(id), 2) === p), `partition ${p}: only its posts`);
    t.same(mine, all.filter(([, , id]) => partitionOf(BigInt(id), 2) === p), `partition ${p}: every one of them, in order`);
    t.same(source.postEvents(0, 1000, p, 2, 5), mine.slice(0, 5), 'the first five');
    seen.push(...mine.map(([seq]) => seq));
  }
  t.equal(new Set(seen).size, all.length, 'the partitions share the events out');
  const deleted = all.filter(([, , id]) => id === String(ids[3]));
  t.same(
    deleted.map(([, type, , text]) => [type, text]),
    [
      ['post_created', null],
      ['post_deleted', null],
    ],
    'a deleted post has no text',
  );
});

t.test('a task stopped by the schedule has read only what it sent; the next goes on from there', async (t) => {
  const f = await searchFixture(t);
  f.post(ALICE, Array.from({ length: 100 }, (_, i) => `scheduled post ${i}`), 9000n);
  // One request, then the schedule says wait: a slot a minute apart and no burst.
  const budget = new SharedBudget(f.hot, { ...BUDGET_LIMITS, burstMs: 0 });
  budget.reset({ ...initialBudgetRecord(), batch: 30, rate: 1 / 60 });
  const source = new CountingSource(f.db);
  const engine = f.engine;
  const first = await indexRange({ source, engine, budget }, { after: 0, upTo: 100 }, 0, 1);
  t.equal(first.writes, 30);
  t.equal(first.bulks, 1);
  t.equal(first.upTo, 30, 'done up to the last event sent');
  t.ok(first.waitMs > 50_000, 'and told to wait for the next slot');
  t.equal(source.rows, 30, 'nothing read beyond the request it sent');
  // The schedule never in the way (any burst allowed) and room for the rest: read once.
  const open = new SharedBudget(f.hot, { ...BUDGET_LIMITS, burstMs: 1e12 });
  open.reset({ ...budget.read(), batch: 100 });
  const second = await indexRange({ source, engine, budget: open }, { after: first.upTo, upTo: 100 }, 0, 1);
  t.same([second.upTo, second.writes, second.waitMs, second.rejected], [100, 70, 0, false]);
  t.equal(source.rows, 100, 'every event read once in all');
  t.equal(engine.applyQueued(10_000), 100);
  t.equal(engine.store.recent(ftsMatchExpression(['scheduled'])!, 1n << 62n, 1000).length, 100);
});

t.test('posts deleted since their creation take no write, and nothing after them is skipped', async (t) => {
  const f = await searchFixture(t);
  const ids = f.post(ALICE, Array.from({ length: 10 }, (_, i) => `kept post ${i}`), 9100n);
  f.remove(ALICE, ids[1]);
  f.remove(ALICE, ids[2]);
  f.remove(ALICE, ids[5]);
  const budget = new SharedBudget(f.hot, { ...BUDGET_LIMITS, burstMs: 1e12 });
  // Four events a read: the first read has two creations of deleted posts among its four.
  budget.reset({ ...initialBudgetRecord(), batch: 4 });
  const source = new CountingSource(f.db);
  const newest = outboxOf(f.db).newest();
  const r = await indexRange({ source, engine: f.engine, budget }, { after: 0, upTo: newest }, 0, 1);
  t.same([r.upTo, r.writes, r.rejected], [newest, 10, false], 'seven index writes and three deletes');
  t.equal(source.rows, 13, 'every event read once');
  t.equal(f.engine.applyQueued(10_000), 10);
  const found = f.engine.store.recent(ftsMatchExpression(['kept'])!, 1n << 62n, 100).map(String);
  t.same(found, ids.filter((_, i) => ![1, 2, 5].includes(i)).reverse(), 'every live post, none of the deleted');
});

t.test('applying leaves the connection syncing as it did', async (t) => {
  const f = await searchFixture(t);
  await f.engine.bulk([{ op: 'index', id: '5', text: 'synced again' }]);
  t.equal(f.engine.store.db.pragma('synchronous', { simple: true }), 2, 'FULL before');
  t.equal(f.engine.applyQueued(1000), 1);
  t.equal(f.engine.store.db.pragma('synchronous', { simple: true }), 2, 'FULL after');
  t.same(f.engine.store.recent('"synced"', 1n << 62n, 10), [5n]);
});

t.test("the queue's depth and head come from the ends of its rowid tree, not a scan", async (t) => {
  const f = await searchFixture(t);
  for (const sql of [QUEUE_DEPTH_SQL, QUEUE_HEAD_SQL]) {
    const plan = queryPlan(f.engine.store.db, sql);
    t.notOk(plan.some((d) => d.startsWith('SCAN write_queue')), `${sql}: ${plan.join('; ')}`);
    t.equal(plan.filter((d) => d.startsWith('SEARCH write_queue')).length, 2, 'one look-up at each end');
  }
  t.equal(f.engine.store.queueDepth(), 0, 'empty');
  await f.engine.bulk([
    { op: 'index', id: '5', text: 'one' },
    { op: 'index', id: '6', text: 'two' },
    { op: 'delete', id: '5' },
  ]);
  t.equal(f.engine.store.queueDepth(), 3);
  t.equal(f.engine.applyQueued(1000, 2), 3, 'applied two, then the last');
  t.equal(f.engine.store.queueDepth(), 0);
  t.same(f.engine.store.recent('"two"', 1n << 62n, 10), [6n]);
  t.same(f.engine.store.recent('"one"', 1n << 62n, 10), [], 'deleted after it was indexed');
});
