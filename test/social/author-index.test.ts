// Posts filed under their authors after the commit (author_posts, migration 004): reads see a
// post as soon as it is committed, whether or not it has been filed yet; filing moves posts from
// the outbox tail into the table without changing any answer; the migration files existing posts.
import t from 'tap';
import { join } from 'node:path';
import { MessageChannel, Worker } from 'node:worker_threads';
import { addUsers, groupCommit, tempStore } from '../helpers/store';
import type { Sqlite } from '../../src/store/sqlite';
import { allMigrations, migrateAll, signalLayout } from '../../src/capabilities';
import { Signals } from '../../src/server/signals';
import { WriterClient } from '../../src/writer/client';
import { AUTHOR_INDEX_POSITION as AUTHOR_INDEX_CONSUMER, SocialStore } from '../../src/social/store';
import type { WriterData } from '../../src/server/messages';

const now = '2026-01-02T00:00:00.000Z';
const ALICE = '1001';
const BOB = '1002';

/** A store not yet migrated: some tests migrate it only part of the way first. */
const freshDb = (t: { teardown(fn: () => unknown): void }) => tempStore(t, 'perch-author-index-', { migrated: false });
const USERS = { [ALICE]: 'alice', [BOB]: 'bob' };

const post = (id: number, authorId: string) => ({ id: String(id), authorId, text: `post ${id}`, mediaIds: [] as string[], replyTo: null, createdAt: now });
const ids = (rows: Array<{ id: string }>) => rows.map((r) => r.id);
const pluck = (db: Sqlite, sql: string) => db.prepare(sql).pluck().all();

t.test('posts are listed under their author before and after filing, the same', async (t) => {
  const { db } = freshDb(t);
  migrateAll(db);
  addUsers(db, USERS, now);
  const store = new SocialStore(db);
  const group = groupCommit(db);
  const position = () => db.prepare('SELECT last_seq FROM event_consumers WHERE name = ?').pluck().get(AUTHOR_INDEX_CONSUMER);
  t.equal(position(), 0, 'the migration starts the position at the newest event (none yet)');

  // Alice 10..15 and Bob 20..22, interleaved; then filed; then Alice 16..18 unfiled.
  const first = [post(10, ALICE), post(20, BOB), post(11, ALICE), post(12, ALICE), post(21, BOB), post(13, ALICE), post(14, ALICE), post(22, BOB), post(15, ALICE)];
  t.ok(group.commit(first.map((p) => ['createPost', p])).every((o) => o.ok));
  t.same(pluck(db, 'SELECT id FROM author_posts'), [], 'nothing filed at commit time');
  t.same(ids(store.authorPage(ALICE, 1000n, 50)), ['15', '14', '13', '12', '11', '10'], 'unfiled posts come from the outbox');
  t.same(ids(store.authorPage(BOB, 1000n, 2)), ['22', '21']);

  const filed = group.commit([['indexAuthorPosts', { now }]]);
  t.same(filed[0], { ok: true, value: 9 }, 'one event per post filed');
  t.equal(position(), 9);
  t.same(pluck(db, `SELECT CAST(id AS TEXT) FROM author_posts WHERE author_id = '${ALICE}' ORDER BY id`), ['10', '11', '12', '13', '14', '15']);
  t.same(group.commit([['indexAuthorPosts', { now }]])[0], { ok: true, value: 0 }, 'nothing new: nothing to file');

  t.ok(group.commit([post(16, ALICE), post(17, ALICE), post(18, ALICE)].map((p) => ['createPost', p])).every((o) => o.ok));
  t.ok(group.commit([['deletePost', { userId: ALICE, postId: '17', now }], ['deletePost', { userId: ALICE, postId: '13', now }]]).every((o) => o.ok));

  // A page across the unfiled tail (18, 16; 17 deleted) and the filed part (15, 14, 12; 13 deleted).
  t.same(ids(store.authorPage(ALICE, 1000n, 5)), ['18', '16', '15', '14', '12']);
  t.same(ids(store.authorPage(ALICE, 16n, 3)), ['15', '14', '12'], 'below a cursor');
  t.same(ids(store.authorPage(ALICE, 12n, 3)), ['11', '10']);
  t.same(ids(store.authorPage(ALICE, 10n, 3)), []);
  t.same(ids(store.authorPage(BOB, 1000n, 50)), ['22', '21', '20'], 'other authors stay apart');
  t.same(store.authorIdsBetween(ALICE, 14n, 1000n, 50), [18n, 16n, 15n]);
  t.same(store.authorIdsBetween(ALICE, 11n, 16n, 2), [15n, 14n], 'both bounds and the limit');
  t.same(store.authorIdsBetween(ALICE, 16n, 18n, 50), [], 'the deleted post between them is not listed');
  // Several ranges at once: the same lists, one per range, in the order given.
  const ranges = [[ALICE, 14n, 1000n], [BOB, 0n, 1000n], [ALICE, 11n, 16n], [ALICE, 16n, 18n], ['1003', 0n, 1000n]] as const;
  t.same(store.idsOfAuthorsBetween(ranges, 2), [[18n, 16n], [22n, 21n], [15n, 14n], [], []], 'ranges at once, each to the limit');
  t.same(store.idsOfAuthorsBetween(ranges, 50), [[18n, 16n, 15n], [22n, 21n, 20n], [15n, 14n, 12n], [], []]);
  t.same(store.idsOfAuthorsBetween([], 50), []);

  const before = { page: ids(store.authorPage(ALICE, 1000n, 50)), between: store.authorIdsBetween(ALICE, 0n, 1000n, 50) };
  // The deletions' events are filed past too: only post_created events add rows.
  t.same(group.commit([['indexAuthorPosts', { now }]])[0], { ok: true, value: 5 });
  t.equal(position(), 14);
  t.same(pluck(db, 'SELECT COUNT(*) FROM author_posts'), [12]);
  t.same({ page: ids(store.authorPage(ALICE, 1000n, 50)), between: store.authorIdsBetween(ALICE, 0n, 1000n, 50) }, before, 'filing changes no answer');
  t.same(ids(store.authorPage(ALICE, 1000n, 50)), ['18', '16', '15', '14', '12', '11', '10']);
  t.same(store.idsOfAuthorsBetween(ranges, 50), [[18n, 16n, 15n], [22n, 21n, 20n], [15n, 14n, 12n], [], []], 'filed: the same lists');

  // Ids are minted before their posts commit: an unfiled post may be older than filed ones.
  t.ok(group.commit([['createPost', post(9, ALICE)], ['createPost', post(19, ALICE)]]).every((o) => o.ok));
  t.same(store.idsOfAuthorsBetween([[ALICE, 0n, 1000n]], 50), [[19n, 18n, 16n, 15n, 14n, 12n, 11n, 10n, 9n]], 'merged in order');
  t.same(store.idsOfAuthorsBetween([[ALICE, 0n, 1000n], [ALICE, 8n, 12n]], 3), [[19n, 18n, 16n], [11n, 10n, 9n]]);
  t.same(store.idsOfAuthorsBetween([[ALICE, 0n, 1000n]], 50), [store.authorIdsBetween(ALICE, 0n, 1000n, 50)], 'as one author read alone');
});

t.test('the migration files the posts of a store made before it, and drops the old index', async (t) => {
  const { db } = freshDb(t);
  // The schema as it was at version 3, with posts written the old way.
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  for (const m of allMigrations().filter((m) => m.version <= 3)) {
    db.exec(m.sql);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, now);
  }
  addUsers(db, USERS, now);
  const insertPost = db.prepare('INSERT INTO posts (id, author_id, text, created_at) VALUES (?, ?, ?, ?)');
  const insertEvent = db.prepare("INSERT INTO events (type, actor_id, post_id, created_at) VALUES ('post_created', ?, ?, ?)");
  for (const [id, author] of [[1, ALICE], [2, BOB], [3, ALICE]] as const) {
    insertPost.run(id, author, `post ${id}`, now);
    insertEvent.run(author, String(id), now);
  }
  t.same(pluck(db, "SELECT name FROM sqlite_master WHERE name = 'posts_author'"), ['posts_author']);

  t.same(migrateAll(db).find((m) => m.version === 4), { version: 4, name: 'author index' });
  t.same(pluck(db, "SELECT name FROM sqlite_master WHERE name = 'posts_author'"), [], 'the index on posts is gone');
  t.same(pluck(db, 'SELECT author_id || \':\' || id FROM author_posts ORDER BY author_id, id'), [`${ALICE}:1`, `${ALICE}:3`, `${BOB}:2`]);
  t.same(pluck(db, `SELECT last_seq FROM event_consumers WHERE name = '${AUTHOR_INDEX_CONSUMER}'`), [3]);
  t.same(ids(new SocialStore(db).authorPage(ALICE, 1000n, 50)), ['3', '1']);
  t.same(migrateAll(db), [], 'applied once');
});

t.test('the writer thread files what a crash left unfiled as it starts, and new posts shortly after their commit', async (t) => {
  const { db, dir } = freshDb(t);
  migrateAll(db);
  addUsers(db, USERS, now);
  // Committed, then the process died before filing it.
  t.ok(groupCommit(db).commit([['createPost', post(29, ALICE)]])[0].ok);
  const filed = () => pluck(db, 'SELECT CAST(id AS TEXT) FROM author_posts ORDER BY id');
  // Polled, not timed: filing follows the start, or a commit, by a few milliseconds (the job
  // waits 100 ms after a commit), on a starved machine by far more: bounded at 10 s.
  const until = async (n: number) => {
    for (const deadline = Date.now() + 10_000; filed().length < n && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 10));
  };

  const { port1, port2 } = new MessageChannel();
  const workerData: WriterData = { dataDir: dir, logLevel: 'silent', ports: [port2], stats: new SharedArrayBuffer(24), signals: Signals.allocate(signalLayout()).buffer };
  const worker = new Worker(join(__dirname, '../../src/writer/thread.js'), { workerData, transferList: [port2] });
  await new Promise<void>((resolve) => worker.once('message', () => resolve()));
  await until(1);
  t.same(filed(), ['29'], 'filed at start, with nothing sent');

  const client = WriterClient.overPort(port1);
  await Promise.all([client.run('createPost', post(30, ALICE)), client.run('createPost', post(31, BOB))]);
  await until(3);
  t.same(filed(), ['29', '30', '31']);
  t.same(pluck(db, `SELECT last_seq FROM event_consumers WHERE name = '${AUTHOR_INDEX_CONSUMER}'`), [3]);
  await worker.terminate();
});
