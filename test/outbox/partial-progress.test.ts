// A consumer that stops before the end of its range (OutboxConsumer.doneUpTo): its position moves
// only as far as the task says, the rest is handed out again by the next run, and a task that
// stopped early ends the run, also at shutdown.
import t from 'tap';
import { addUsers, commitAll, groupCommit, groupWriterClient, tempStore, type Teardown } from '../helpers/store';
import { dispatchOutbox, type OutboxConsumer, type OutboxRange } from '../../src/outbox/consumer';
import { outboxOf } from '../../src/outbox/store';
import type { BackgroundContext } from '../../src/server/background';

const ALICE = '1001';
const now = '2026-01-02T00:00:00.000Z';

function setup(t: Teardown, stopAt: (range: OutboxRange) => number) {
  const { db } = tempStore(t, 'perch-outbox-partial-');
  addUsers(db, { [ALICE]: 'alice' });
  const group = groupCommit(db);
  const writes = groupWriterClient(group);
  const ranges: OutboxRange[] = [];
  const tasks = {
    'test.partial': (_ctx: unknown, range: OutboxRange) => {
      ranges.push(range);
      return { upTo: stopAt(range) };
    },
  };
  const consumer: OutboxConsumer<{ upTo: number }> = { name: 'partial', tasks, task: 'test.partial', batch: 4, everyMs: 10, doneUpTo: (r) => r.upTo };
  const ctx = {
    sqlite: db,
    writes,
    runTask: async (table: Record<string, (ctx: unknown, p: unknown) => unknown>, name: string, payload: unknown) => table[name](null, payload),
  } as unknown as BackgroundContext;
  const posts = (n: number, from: number) =>
    commitAll(group, Array.from({ length: n }, (_, i): [string, unknown] => ['createPost', { id: String(from + i), authorId: ALICE, text: 'p', mediaIds: [], replyTo: null, createdAt: now }]));
  return { consumer, ctx, ranges, posts, position: () => outboxOf(db).position('partial') };
}

t.test('the position moves only as far as the task got; the next run starts there', async (t) => {
  let limit = 2;
  const s = setup(t, (range) => Math.min(range.upTo, limit));
  s.posts(6, 100);
  const later = await dispatchOutbox(s.consumer, s.ctx);
  t.same(s.ranges, [{ after: 0, upTo: 4 }], 'a full batch that stopped early ends the run');
  t.equal(s.position(), 2);
  t.equal(later, 10, 'and asks for a run a period later (no gap given): the rest waits for nothing else');
  limit = 100;
  await dispatchOutbox(s.consumer, s.ctx);
  t.same(s.ranges.slice(1), [{ after: 2, upTo: 6 }]);
  t.equal(s.position(), 6);
});

t.test('no progress leaves the position; an answer outside the range is clamped to it', async (t) => {
  let answer = 0;
  const s = setup(t, () => answer);
  s.posts(3, 200);
  t.equal(await dispatchOutbox(s.consumer, s.ctx, true), undefined, 'the final run asks for no later run');
  t.equal(s.position(), 0, 'no progress, and the final run does not spin');
  t.equal(s.ranges.length, 1);
  answer = 99;
  await dispatchOutbox(s.consumer, s.ctx);
  t.equal(s.position(), 3, 'clamped to the range');
});
