// The writer used in-process (as the only HTTP thread uses it): writes sent through its local
// client commit and answer; a group that finds another connection holding SQLite's write lock
// waits on a timer, not in SQLite's busy handler, so the thread keeps running meanwhile.
import t from 'tap';
import { unlinkSync } from 'node:fs';
import { addUsers, tempStore } from '../helpers/store';
import { walPath, type Sqlite } from '../../src/store/sqlite';
import { Writer } from '../../src/writer/writer';
import { WriterClient } from '../../src/writer/client';
import { writerSetup } from '../../src/capabilities';
import { setLogLevel } from '../../src/log';

/** A writer with every capability's operations, as the server builds it. */
function newWriter(dataDir: string, stats = new Float64Array(3), onSyncFailure = () => {}, raise?: (signal: string) => void): Writer {
  return new Writer({ dataDir, setup: writerSetup(), stats, onSyncFailure, raise });
}

/** An operation that fails as SQLite does when it cannot grow its files: the disk is full. */
const FULL_DISK = () => ({
  fillDisk(): void {
    throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
  },
});

const now = '2026-01-02T00:00:00.000Z';
const USER = '1001';

type Teardown = { teardown(fn: () => unknown): void };

/** A migrated store with one user, and a test connection to it, removed after the test. */
function freshStore(t: Teardown): { dir: string; db: Sqlite } {
  const store = tempStore(t, 'perch-writer-local-');
  addUsers(store.db, { [USER]: 'w' }, now);
  return store;
}

/** A fresh store with a writer that the test leaves running (stopped after it). */
function setup(t: Teardown) {
  const { dir, db } = freshStore(t);
  const stats = new Float64Array(3);
  const writer = newWriter(dir, stats);
  t.teardown(() => writer.stop());
  return { db, writer, stats, client: writer.localClient() };
}

const post = (id: string) => ({ id, authorId: USER, text: 'hi ' + id, mediaIds: [] as string[], replyTo: null, createdAt: now });
const count = (db: Sqlite, sql: string) => db.prepare(sql).pluck().get() as number;

t.test('writes sent through the local client commit as one group and answer each', async (t) => {
  const { db, client, stats } = setup(t);
  const [a, b] = await Promise.allSettled([client.run('createPost', post('7001')), client.run('createPost', { ...post('7002'), replyTo: '999' })]);
  t.match(a, { status: 'fulfilled', value: { id: '7001', text: 'hi 7001' } });
  t.match(b, { status: 'rejected', reason: { status: 400, code: 'invalid_request' } });
  t.equal(count(db, 'SELECT COUNT(*) FROM posts'), 1);
  t.same([...stats], [1, 2, 0], 'one group commit carrying two requested writes');
});

t.test('the local client commits a turn\'s writes once the code that made them has run, not a turn later', async (t) => {
  const { db, client, stats } = setup(t);
  const seen: Array<[string, number]> = [];
  // An immediate queued before the writes: a client that waited for the next turn's immediates
  // would send after it, and the posts would not be committed when it runs.
  setImmediate(() => seen.push(['next immediate', count(db, 'SELECT COUNT(*) FROM posts')]));
  const written = Promise.all([client.run('createPost', post('7101')), client.run('createPost', post('7102'))]);
  seen.push(['same code', count(db, 'SELECT COUNT(*) FROM posts')]);
  await written;
  t.same(seen, [
    ['same code', 0],
    ['next immediate', 2],
  ], 'nothing sent while the code that made the writes runs; both committed before the next immediate');
  t.same([...stats], [1, 2, 0], 'in one group commit');
});

t.test('a client of a writer on another thread sends a turn\'s writes in one message, in the next turn', async (t) => {
  const sent: unknown[][] = [];
  const order: string[] = [];
  const client = new WriterClient({ send: (request) => (sent.push(request), order.push('sent')), close: () => {} });
  setImmediate(() => order.push('immediate queued before'));
  // Nothing answers over this link: closing the client rejects both writes (503).
  const unanswered = [client.run('a', 1), client.run('b', 2)].map((p) => p.catch((err: { status?: number }) => err.status));
  await new Promise((resolve) => setImmediate(resolve));
  t.same(order, ['immediate queued before', 'sent']);
  t.equal(sent.length, 1, 'one message');
  t.same([sent[0][1], sent[0][2], sent[0][4], sent[0][5]], ['a', 1, 'b', 2], 'both writes, in order');
  client.close();
  t.same(await Promise.all(unanswered), [503, 503]);
});

t.test('a group waits out another connection holding the write lock, without blocking the thread', async (t) => {
  const { db, client } = setup(t);
  db.exec('BEGIN IMMEDIATE');
  let answered = false;
  const write = client.run('createPost', post('7101')).then((p) => ((answered = true), p));
  // Timers keep firing while the write waits: the thread is not asleep in SQLite's busy handler.
  // Counted until five ticks came, within 2 s: a starved machine may run this thread seldom, but
  // a thread asleep in the busy handler (5 s by default) runs no timer at all meanwhile.
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 5);
  const started = Date.now();
  while (ticks < 5 && Date.now() - started < 2000) await new Promise((r) => setTimeout(r, 5));
  clearInterval(ticker);
  t.ok(ticks >= 5, `the event loop kept running (${ticks} ticks of 5 ms in ${Date.now() - started} ms)`);
  t.notOk(answered, 'not answered while the lock is held');
  // A write sent meanwhile joins the waiting group, in order.
  const second = client.run('createPost', post('7102'));
  db.exec('COMMIT');
  t.match(await write, { id: '7101' });
  t.match(await second, { id: '7102' });
  t.equal(count(db, 'SELECT COUNT(*) FROM posts WHERE id IN (7101, 7102)'), 2);
});

t.test('stop commits what still waits for the lock before it closes', async (t) => {
  const { dir, db } = freshStore(t);
  const writer = newWriter(dir);
  const client = writer.localClient();
  db.exec('BEGIN IMMEDIATE');
  const write = client.run('createPost', post('7201'));
  await new Promise((r) => setImmediate(r));
  const stopped = writer.stop();
  setTimeout(() => db.exec('COMMIT'), 30);
  await stopped;
  t.match(await write, { id: '7201' });
  t.equal(count(db, 'SELECT COUNT(*) FROM posts WHERE id = 7201'), 1);
});

t.test('after a failed log sync every write is answered 503, and nothing more is committed', async (t) => {
  const { dir, db } = freshStore(t);
  let failures = 0;
  const writer = newWriter(dir, new Float64Array(3), () => failures++);
  const client = writer.localClient();
  // The log cannot be opened for the first sync, so that sync fails (and the writer logs it).
  setLogLevel('silent');
  t.teardown(() => setLogLevel('info'));
  unlinkSync(walPath(dir));
  await t.rejects(client.run('createPost', post('7301')), { status: 503, code: 'unavailable' });
  t.equal(failures, 1, 'the failure is reported once');
  await t.rejects(client.run('createPost', post('7302')), { status: 503, message: 'The write could not be made durable; try again shortly.' });
  t.equal(failures, 1);
  t.equal(count(db, 'SELECT COUNT(*) FROM posts WHERE id = 7302'), 0, 'the later write was not committed');
  await writer.stop();
});

t.test('the outbox signal is raised once a sync has made new events durable, and only then', async (t) => {
  const { dir } = freshStore(t);
  const raised: string[] = [];
  const writer = newWriter(dir, new Float64Array(3), () => {}, (signal) => raised.push(signal));
  t.teardown(() => writer.stop());
  const client = writer.localClient();
  const written = client.run('createPost', post('7401'));
  t.same(raised, [], 'not before the answer');
  await written;
  t.same(raised, ['outbox'], 'raised with the answer');
  await client.run('like', { userId: USER, postId: '7401', now });
  t.same(raised, ['outbox', 'outbox', 'outbox:notifications'], "a like is an event too, and one the notification generation's signal announces");
  await client.run('like', { userId: USER, postId: '7401', now });
  await t.rejects(client.run('createPost', { ...post('7402'), replyTo: '999' }), { status: 400, code: 'invalid_request' });
  t.equal(raised.length, 3, 'a like that changed nothing, or a post that failed, appends no event');
  await Promise.all([client.run('createPost', post('7403')), client.run('createPost', post('7404'))]);
  t.same(raised.slice(3), ['outbox'], 'once per sync, however many events it covered');
});

t.test('a write that finds the disk full answers 503 with Retry-After; the others of its group commit', async (t) => {
  const { dir, db } = freshStore(t);
  const stats = new Float64Array(3);
  const setup = writerSetup();
  const writer = new Writer({ dataDir: dir, setup: { ...setup, writes: [...setup.writes, FULL_DISK] }, stats, onSyncFailure: () => {} });
  t.teardown(() => writer.stop());
  const client = writer.localClient();
  setLogLevel('silent');
  const [full, fine] = await Promise.allSettled([client.run('fillDisk', {}), client.run('createPost', post('7501'))]);
  t.match(full, { status: 'rejected', reason: { status: 503, code: 'unavailable', headers: { 'Retry-After': /^\d+$/ } } });
  t.match(fine, { status: 'fulfilled', value: { id: '7501' } });
  t.equal(count(db, 'SELECT COUNT(*) FROM posts WHERE id = 7501'), 1);
  t.equal(stats[2], 1, 'counted for /metrics');
  await t.rejects(client.run('fillDisk', {}), { status: 503, code: 'unavailable' });
  t.equal(stats[2], 2);
  t.match(await client.run('createPost', post('7502')), { id: '7502' }, 'writes go on when there is room');
});

/** A gathering policy whose window is longer than any test: a group that waits for it never commits. */
const NEVER_ENDING_WINDOW = { windowMs: 600_000, target: 4, minInFlight: 3, memoryMs: 600_000 };

/** A fresh store and a writer with NEVER_ENDING_WINDOW; `stopAfter`: stopped when the test ends (else the test stops it). */
function gatheringWriter(t: Teardown, stopAfter = true) {
  const { dir, db } = freshStore(t);
  const stats = new Float64Array(3);
  const writer = new Writer({ dataDir: dir, setup: writerSetup(), stats, onSyncFailure: () => {}, gather: NEVER_ENDING_WINDOW });
  if (stopAfter) t.teardown(() => writer.stop());
  return { db, stats, writer, client: writer.localClient() };
}

t.test('a client that writes one at a time is never held back to gather', async (t) => {
  const { db, stats, client } = gatheringWriter(t);
  // Each awaited before the next: had one waited for the window, the test would time out.
  for (let i = 0; i < 20; i++) await client.run('createPost', post(String(7600 + i)));
  t.equal(count(db, 'SELECT COUNT(*) FROM posts WHERE id BETWEEN 7600 AND 7619'), 20);
  t.same([...stats], [20, 20, 0], 'each committed alone, at once');
});

t.test('after several writes were in flight at once, writes that come one by one are committed as one group', async (t) => {
  const { db, stats, client } = gatheringWriter(t);
  await Promise.all([client.run('createPost', post('7701')), client.run('createPost', post('7702')), client.run('createPost', post('7703'))]);
  t.same([...stats], [1, 3, 0], 'three in flight at once, in one group that commits at once');
  // Now three writes in three turns: the first waits for the others, and the third completes the
  // group (as many as were in flight lately).
  const later: Array<Promise<unknown>> = [];
  for (let i = 4; i <= 6; i++) {
    later.push(client.run('createPost', post(String(7700 + i))));
    await new Promise((resolve) => setImmediate(resolve));
    if (i < 6) t.equal(count(db, 'SELECT COUNT(*) FROM posts WHERE id > 7703'), 0, `nothing committed after ${i - 3} of them`);
  }
  await Promise.all(later);
  t.equal(count(db, 'SELECT COUNT(*) FROM posts WHERE id BETWEEN 7701 AND 7706'), 6);
  t.same([...stats], [2, 6, 0], 'the three of them in one group');
});

t.test('stop commits a group that waits for more writes, without waiting out its window', async (t) => {
  const { db, writer, client } = gatheringWriter(t, false);
  await Promise.all(['7801', '7802', '7803'].map((id) => client.run('createPost', post(id))));
  const waiting = client.run('createPost', post('7804'));
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(count(db, 'SELECT COUNT(*) FROM posts WHERE id = 7804'), 0, 'it waits for more');
  await writer.stop();
  t.match(await waiting, { id: '7804' });
  t.equal(count(db, 'SELECT COUNT(*) FROM posts WHERE id = 7804'), 1);
});
