// Pruning the outbox: an event is deleted only once every position is done with it and it is
// older than the retention; nothing a consumer or a reader still needs goes, and sequence numbers
// go on from where they were.
import t from 'tap';
import { addUsers, groupCommit, queryPlan, tempStore, type Teardown } from '../helpers/store';
import type { Sqlite } from '../../src/store/sqlite';
import type { WriterClient } from '../../src/writer/client';
import { AUTHOR_INDEX_POSITION as AUTHOR_INDEX_CONSUMER, FANOUT_CONSUMER, SocialStore } from '../../src/social/store';
import { KEPT_SQL, outboxOf } from '../../src/outbox/store';
import { OUTBOX_RETENTION_MS, pruneOutbox } from '../../src/outbox/module';
import { CAPABILITIES } from '../../src/capabilities';

const ALICE = '1001';
const OLD = '2026-01-02T00:00:00.000Z';
const NEW = '2026-01-02T05:00:00.000Z';
/** Two hours after OLD: OLD is past the one-hour retention, NEW is not yet made. */
const CUTOFF = '2026-01-02T01:00:00.000Z';

const post = (id: number, createdAt: string) => ({ id: String(id), authorId: ALICE, text: `post ${id}`, mediaIds: [] as string[], replyTo: null, createdAt });
const seqs = (db: Sqlite) => db.prepare('SELECT seq FROM events ORDER BY seq').pluck().all() as number[];
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

function setup(t: Teardown) {
  const { db } = tempStore(t, 'perch-outbox-prune-');
  addUsers(db, { [ALICE]: 'alice' });
  const group = groupCommit(db);
  const commit = (ops: Array<[string, unknown]>) => {
    const out = group.commit(ops as never);
    for (const o of out) if (!o.ok) throw o.error;
    return out.map((o) => (o as { value: unknown }).value);
  };
  const position = (name: string, seq: number) => commit([['advanceConsumer', { name, seq, now: OLD }]]);
  // Consumers this test is not about are kept out of the way, at the far end of the outbox.
  for (const c of CAPABILITIES.flatMap((m) => m.consumers ?? [])) if (c.name !== FANOUT_CONSUMER) position(c.name, Number.MAX_SAFE_INTEGER);
  return { db, commit, position, store: new SocialStore(db) };
}
t.test('only events every consumer processed, and older than the cutoff, are deleted', async (t) => {
  const { db, commit, position } = setup(t);
  commit(range(1, 6).map((i) => ['createPost', post(100 + i, OLD)]));
  commit(range(7, 8).map((i) => ['createPost', post(100 + i, NEW)]));
  t.same(seqs(db), range(1, 8));

  const prune = (limit = 100) => commit([['pruneOutbox', { before: CUTOFF, limit }]])[0];
  // The author filing is at 0 after the migration, and the fan-out has no position at all.
  t.equal(prune(), 0, 'a consumer without a position holds back everything');
  position(FANOUT_CONSUMER, 8);
  t.equal(prune(), 0, 'the filing has processed nothing yet');
  position(AUTHOR_INDEX_CONSUMER, 4);
  t.equal(prune(), 4, 'up to the slowest consumer');
  t.same(seqs(db), range(5, 8));
  position(AUTHOR_INDEX_CONSUMER, 8);
  t.equal(prune(1), 1, 'at most `limit` per write');
  t.equal(prune(), 1, 'then the rest made before the cutoff');
  t.same(seqs(db), [7, 8], 'events made after the cutoff are kept, though processed');
  t.equal(outboxOf(db).kept(), 2, 'the events kept');
  t.equal(prune(), 0);
  t.equal(db.prepare('SELECT COUNT(*) FROM posts').pluck().get(), 8, 'the posts themselves stay');
});

t.test('readers and numbering are unchanged by pruning', async (t) => {
  const { db, commit, position, store } = setup(t);
  commit(range(1, 3).map((i) => ['createPost', post(100 + i, OLD)]));
  commit([['indexAuthorPosts', { now: OLD }]]);
  position(FANOUT_CONSUMER, 3);
  // Posts 104 and 105 are not filed yet: they are read from the outbox tail.
  commit(range(4, 5).map((i) => ['createPost', post(100 + i, OLD)]));
  t.equal(commit([['pruneOutbox', { before: CUTOFF, limit: 100 }]])[0], 3, 'the filed and fanned-out events');
  t.same(seqs(db), [4, 5]);
  t.same(
    store.authorPage(ALICE, 1000n, 10).map((p) => p.id),
    ['105', '104', '103', '102', '101'],
    'an author page still joins the filed part and the unfiled tail',
  );

  commit([['indexAuthorPosts', { now: OLD }]]);
  position(FANOUT_CONSUMER, 5);
  t.equal(commit([['pruneOutbox', { before: CUTOFF, limit: 100 }]])[0], 2);
  t.same(seqs(db), [], 'the outbox can be emptied');
  const outbox = outboxOf(db);
  t.equal(outbox.newest(), 5, 'the newest event number survives an empty outbox');
  t.same(outbox.lag(FANOUT_CONSUMER), { events: 0, seconds: 0 });
  commit([['createPost', post(106, NEW)]]);
  t.same(seqs(db), [6], 'numbers are never reused');
  t.same(outbox.lag(FANOUT_CONSUMER).events, 1);
});

t.test('pruneOutbox deletes a backlog a batch per write, with the retention from now', async (t) => {
  const { db, commit, position } = setup(t);
  commit(range(1, 4500).map((i) => ['createPost', post(10_000 + i, OLD)]));
  position(FANOUT_CONSUMER, 4500);
  position(AUTHOR_INDEX_CONSUMER, 4500);
  const writes: Array<{ before: string; limit: number }> = [];
  const client = {
    run: async (op: string, args: { before: string; limit: number }) => {
      t.equal(op, 'pruneOutbox', 'the job writes nothing else');
      writes.push(args);
      return commit([[op, args]])[0];
    },
  } as unknown as WriterClient;
  client.as = () => client as never;

  const justAfter = Date.parse(OLD) + OUTBOX_RETENTION_MS - 1000;
  t.equal(await pruneOutbox({ writes: client }, justAfter), 0, 'within the retention: nothing');
  t.equal(writes.length, 1);

  writes.length = 0;
  const later = Date.parse(OLD) + OUTBOX_RETENTION_MS + 1000;
  t.equal(await pruneOutbox({ writes: client }, later), 4500);
  t.same(
    writes.map((w) => w.limit),
    [2000, 2000, 2000],
    'full batches go on at once, a short one ends the run',
  );
  t.equal(writes[0].before, new Date(later - OUTBOX_RETENTION_MS).toISOString());
  t.same(seqs(db), []);
});

t.test('the filing holds back only the posts it has not filed: the likes and follows after it go', async (t) => {
  const { db, commit, position } = setup(t);
  commit([['createPost', post(101, OLD)]]);
  commit([['indexAuthorPosts', { now: OLD }]]);
  // Only likes since: the writer's filing, which runs after new posts, has not moved past them.
  commit([['like', { userId: ALICE, postId: '101', now: OLD }], ['unlike', { userId: ALICE, postId: '101', now: OLD }]]);
  position(FANOUT_CONSUMER, 3);
  // Notifications read likes too: their generation has to pass them (a like of one's own post
  // notifies nobody, so it adds no event).
  const generate = () => commit([['generateNotifications', { limit: 500, windowMs: 3_600_000, now: OLD }]]);
  generate();
  t.same(seqs(db), [1, 2, 3]);
  t.equal(commit([['pruneOutbox', { before: CUTOFF, limit: 100 }]])[0], 3, 'the filing reads only post_created events');
  t.same(seqs(db), []);

  // A post not filed yet holds back itself and everything after it.
  commit([['createPost', post(102, OLD)], ['like', { userId: ALICE, postId: '101', now: OLD }]]);
  commit([['like', { userId: ALICE, postId: '102', now: OLD }]]);
  position(FANOUT_CONSUMER, 6);
  generate();
  t.equal(commit([['pruneOutbox', { before: CUTOFF, limit: 100 }]])[0], 0, 'the unfiled post (4) holds back 4..6');
  commit([['indexAuthorPosts', { now: OLD }]]);
  t.equal(commit([['pruneOutbox', { before: CUTOFF, limit: 100 }]])[0], 3);
  t.same(seqs(db), []);
});

t.test('the events kept are counted from the ends of the rowid tree, not by a scan', async (t) => {
  const { db } = setup(t);
  const plan = queryPlan(db, KEPT_SQL);
  t.notOk(plan.some((d) => d.startsWith('SCAN events')), plan.join('; '));
  t.equal(plan.filter((d) => d.startsWith('SEARCH events')).length, 2);
  t.equal(outboxOf(db).kept(), 0, 'none yet');
});
