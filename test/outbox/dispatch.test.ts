// The outbox dispatcher with a real store and a recording task: a consumer gets every event once,
// in order, a batch at a time; its position moves only after its task succeeded; its gap holds
// back the next task while events keep coming; the final run at shutdown takes everything.
import t from 'tap';
import { addUsers, commitAll, groupCommit, groupWriterClient, tempStore, type Teardown } from '../helpers/store';
import { dispatchOutbox, type OutboxConsumer, type OutboxRange } from '../../src/outbox/consumer';
import { outboxOf } from '../../src/outbox/store';
import type { BackgroundContext } from '../../src/server/background';

const ALICE = '1001';
const now = '2026-01-02T00:00:00.000Z';

function setup(t: Teardown, consumerOptions: Partial<OutboxConsumer<number>> = {}) {
  const { db, dir } = tempStore(t, 'perch-outbox-dispatch-');
  addUsers(db, { [ALICE]: 'alice' });
  const group = groupCommit(db);
  // The supervisor's client, here committing on the test's own connection.
  const writes = groupWriterClient(group);
  const ranges: OutboxRange[] = [];
  let failNext = false;
  const tasks = {
    'test.consume': (_ctx: unknown, range: OutboxRange) => {
      if (failNext) {
        failNext = false;
        throw new Error('task failed');
      }
      ranges.push(range);
      return range.upTo - range.after;
    },
  };
  const consumer: OutboxConsumer<number> = { name: 'test', tasks, task: 'test.consume', batch: 3, everyMs: 10, ...consumerOptions };
  const ctx = {
    sqlite: db,
    writes,
    runTask: async (table: Record<string, (ctx: unknown, p: unknown) => unknown>, name: string, payload: unknown) => table[name](null, payload),
  } as unknown as BackgroundContext;
  const posts = (n: number, from: number) =>
    commitAll(group, Array.from({ length: n }, (_, i): [string, unknown] => ['createPost', { id: String(from + i), authorId: ALICE, text: 'p', mediaIds: [], replyTo: null, createdAt: now }]));
  return { db, dir, consumer, ctx, ranges, posts, position: () => outboxOf(db).position('test'), failNextTask: () => (failNext = true) };
}

t.test('a backlog goes in full batches back to back, a short batch ends the run', async (t) => {
  const s = setup(t);
  s.posts(7, 100);
  await dispatchOutbox(s.consumer, s.ctx);
  t.same(s.ranges, [{ after: 0, upTo: 3 }, { after: 3, upTo: 6 }, { after: 6, upTo: 7 }]);
  t.equal(s.position(), 7);
  await dispatchOutbox(s.consumer, s.ctx);
  t.equal(s.ranges.length, 3, 'nothing new: no task');
});

t.test('a failed task leaves the position where it was; the next run gives the same range again', async (t) => {
  const s = setup(t);
  s.posts(2, 200);
  s.failNextTask();
  await t.rejects(dispatchOutbox(s.consumer, s.ctx), /task failed/);
  t.equal(s.position(), 0);
  await dispatchOutbox(s.consumer, s.ctx);
  t.same(s.ranges, [{ after: 0, upTo: 2 }]);
  t.equal(s.position(), 2);
});

t.test('a run that hands out every event asks for no later run', async (t) => {
  const s = setup(t, { gapMs: () => 0 });
  s.posts(2, 200);
  t.equal(await dispatchOutbox(s.consumer, s.ctx), undefined);
  t.same(s.ranges, [{ after: 0, upTo: 2 }]);
  t.equal(await dispatchOutbox(s.consumer, s.ctx), undefined, 'nor one with nothing new');
});

t.test('the gap holds the next task back while events keep coming; the final run does not wait', async (t) => {
  const s = setup(t, { gapMs: (last) => (last === undefined ? 0 : 60_000) });
  s.posts(1, 300);
  await dispatchOutbox(s.consumer, s.ctx);
  s.posts(1, 301);
  const left = await dispatchOutbox(s.consumer, s.ctx);
  t.same(s.ranges, [{ after: 0, upTo: 1 }], 'the second waits for the gap after a task that succeeded');
  t.ok(typeof left === 'number' && left > 59_000 && left <= 60_000, `it answers what is left of the gap (${left} ms), for the job to run again then`);
  await dispatchOutbox(s.consumer, s.ctx, true);
  t.same(s.ranges, [{ after: 0, upTo: 1 }, { after: 1, upTo: 2 }], 'taken at shutdown');
  t.equal(s.position(), 2);
});

t.test('a consumer of some event types gets no task for a range without them; the others move its position once they fill a batch', async (t) => {
  const s = setup(t, { types: ['like'] });
  const like = (postId: string) => commitAll(groupCommit(s.db), [['like', { userId: ALICE, postId, now }]]);
  const outbox = outboxOf(s.db);
  s.posts(2, 400);
  await dispatchOutbox(s.consumer, s.ctx);
  t.same(s.ranges, [], 'two posts: no task');
  t.equal(s.position(), 0, 'and no write');
  t.same(outbox.lag('test', Date.now(), ['like']), { events: 0, seconds: 0 }, 'nothing of its types waits');
  t.equal(outbox.lag('test').events, 2, 'counted over every type, two events wait');
  s.posts(1, 402);
  await dispatchOutbox(s.consumer, s.ctx);
  t.same(s.ranges, [], 'a batch of posts: still no task');
  t.equal(s.position(), 3, 'but the position moves past them');
  s.posts(2, 403);
  like('404');
  t.equal(outbox.lag('test', Date.now(), ['like']).events, 1);
  await dispatchOutbox(s.consumer, s.ctx);
  t.same(s.ranges, [{ after: 5, upTo: 6 }], 'the range starts at the like');
  t.equal(s.position(), 6);
  s.posts(1, 405);
  await dispatchOutbox(s.consumer, s.ctx);
  t.equal(s.position(), 6, 'one post after it: left for later');
  await dispatchOutbox(s.consumer, s.ctx, true);
  t.equal(s.position(), 7, 'the final run moves past it');
  t.equal(s.ranges.length, 1, 'with no task');
});

t.test('a consumer of some event types takes a backlog of them in full batches from its first event', async (t) => {
  const s = setup(t, { types: ['like'] });
  s.posts(5, 500);
  commitAll(groupCommit(s.db), ['500', '501', '502', '503'].map((postId): [string, unknown] => ['like', { userId: ALICE, postId, now }]));
  s.posts(1, 505);
  await dispatchOutbox(s.consumer, s.ctx);
  t.same(s.ranges, [{ after: 5, upTo: 8 }, { after: 8, upTo: 10 }], 'the likes are events 6 to 9; the ranges start at them');
  t.equal(s.position(), 10);
});

t.test("afterTask hears each task's answer once its position has moved, and not of a failed task", async (t) => {
  const heard: Array<{ result: number; position: number }> = [];
  const s = setup(t, {
    afterTask: (result, ctx) => {
      t.equal(ctx, s.ctx, 'with the background context');
      heard.push({ result, position: outboxOf(s.db).position('test') });
    },
  });
  s.posts(4, 400);
  await dispatchOutbox(s.consumer, s.ctx);
  t.same(heard, [{ result: 3, position: 3 }, { result: 1, position: 4 }]);
  s.posts(1, 500);
  s.failNextTask();
  await t.rejects(dispatchOutbox(s.consumer, s.ctx), /task failed/);
  t.equal(heard.length, 2);
});
