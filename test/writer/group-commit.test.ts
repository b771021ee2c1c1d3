// The writer thread's group commit: failure isolation inside one batch, errors that keep their
// HTTP shape across threads, and requests that end with 503 rather than hang when the writer dies.
import t from 'tap';
import { join } from 'node:path';
import { MessageChannel, Worker } from 'node:worker_threads';
import { addUsers, tempStore } from '../helpers/store';
import { GroupCommit, ISOLATED_AFTER_RERUN } from '../../src/writer/group-commit';
import { WriterClient } from '../../src/writer/client';
import { writeExecutor } from '../../src/writer/operations';
import { signalLayout, writerSetup } from '../../src/capabilities';
import { Signals } from '../../src/server/signals';
import { HttpError } from '../../src/http/errors';
import type { WriterData } from '../../src/server/messages';

const { dir, db } = tempStore(t, 'perch-writer-');
const USER = '1001';
addUsers(db, { [USER]: 'w' });
const exec = writeExecutor(db, writerSetup().writes);

const now = '2026-01-02T00:00:00.000Z';
const post = (id: string, replyTo: string | null = null) => ({ id, authorId: USER, text: 'hi ' + id, mediaIds: [] as string[], replyTo, createdAt: now });
const count = (sql: string) => (db.prepare(sql).pluck().get() as number) ?? 0;

t.test('one failing write in a batch rolls back alone; the others commit with their events', async (t) => {
  const group = new GroupCommit(db, exec);
  const out = group.commit([
    ['createPost', post('5001')],
    ['createPost', post('5002', '999999')], // reply to a post that does not exist
    ['createPost', post('5003', '5001')], // reply to a post created earlier in the same batch
    ['createPost', { ...post('5004'), mediaIds: ['42'] }], // media not owned by the author
    ['insertMedia', { id: '7001', ownerId: USER, contentType: 'image/png', size: 3, now, quotaBytes: 0 }],
    ['insertMedia', { id: '7001', ownerId: USER, contentType: 'image/png', size: 3, now, quotaBytes: 0 }], // duplicate id: constraint error
  ]);
  t.same(
    out.map((o) => o.ok),
    [true, false, true, false, true, false],
  );
  const bad = out[1] as { ok: false; error: unknown };
  t.ok(bad.error instanceof HttpError);
  t.equal((bad.error as HttpError).status, 400);
  t.same((bad.error as HttpError).body().details, [{ path: 'reply_to', message: 'no such post' }]);
  t.match((out[5] as { ok: false; error: Error }).error.message, /UNIQUE/);
  t.same((out[0] as { value: unknown }).value, { id: '5001', text: 'hi 5001', author_id: USER, media_ids: [], reply_to: null, created_at: now });
  t.equal(count("SELECT COUNT(*) FROM posts WHERE id IN (5001, 5003)"), 2);
  t.equal(count("SELECT COUNT(*) FROM posts WHERE id IN (5002, 5004)"), 0);
  t.equal(count("SELECT reply_count FROM posts WHERE id = 5001"), 1);
  t.equal(count("SELECT COUNT(*) FROM events WHERE type = 'post_created'"), 2);
  t.equal(count("SELECT COUNT(*) FROM events WHERE type = 'reply'"), 1);
  t.equal(count("SELECT COUNT(*) FROM media WHERE id = '7001'"), 1);
  t.same(group.stats, { commits: 1, writes: 6, reruns: 1, isolated: 0 }, 'failing writes made the batch run again, isolated');
});

t.test('a batch without a failing write runs once, without the isolated second run', async (t) => {
  const group = new GroupCommit(db, exec);
  const out = group.commit([
    ['createPost', post('5201')],
    ['createPost', post('5202', '5201')],
  ]);
  t.same(
    out.map((o) => o.ok),
    [true, true],
  );
  t.same(group.stats, { commits: 1, writes: 2, reruns: 0, isolated: 0 });
  t.equal(count('SELECT reply_count FROM posts WHERE id = 5201'), 1);
  t.equal(count("SELECT COUNT(*) FROM events WHERE post_id IN ('5201', '5202') AND type = 'post_created'"), 2);
});

t.test('after a rerun, the next batches run isolated at once, with the same outcomes', async (t) => {
  const group = new GroupCommit(db, exec);
  const failing = (i: number) => ['like', { userId: USER, postId: String(990_000 + i), now }] as [string, unknown]; // no such post
  let n = 0;
  const batch = () => {
    n++;
    return group.commit([['createPost', post(String(70_000 + n))], failing(n)]);
  };
  for (let i = 0; i < ISOLATED_AFTER_RERUN + 1; i++) t.same(batch().map((o) => o.ok), [true, false]);
  t.same(group.stats, { commits: ISOLATED_AFTER_RERUN + 1, writes: 2 * (ISOLATED_AFTER_RERUN + 1), reruns: 1, isolated: ISOLATED_AFTER_RERUN });
  t.same(batch().map((o) => o.ok), [true, false], 'then a plain attempt again');
  t.equal(group.stats.reruns, 2);
  t.same(group.commit([['createPost', post('79999')]]).map((o) => o.ok), [true]);
  t.equal(group.stats.isolated, ISOLATED_AFTER_RERUN + 1, 'a clean batch in that stretch runs isolated too');
  t.equal(count('SELECT COUNT(*) FROM posts WHERE id > 70000 AND id < 80000'), ISOLATED_AFTER_RERUN + 3, 'every good write committed');
});

t.test("the short-link service's writes run in the same groups, with their own outcomes", async (t) => {
  const group = new GroupCommit(db, exec);
  const link = { code: 'abc1234', id: '9001', ownerId: USER, url: 'https://example.com/a', domain: 'example.com', createdMs: Date.parse(now), expiresMs: null };
  const out = group.commit([
    ['insertLink', link],
    ['insertLink', { ...link, id: '9002' }], // the same code again: constraint error
    ['updateLink', { code: 'abc1234', edit: { target: { url: 'https://example.com/b', domain: 'example.com' } }, nowMs: Date.parse(now) + 1000 }],
    ['updateLink', { code: 'nope000', edit: { target: { url: 'https://example.com/c', domain: 'example.com' } }, nowMs: Date.parse(now) }],
    ['removeLink', { code: 'nope000' }],
    ['createPost', post('5101')],
  ]);
  t.same(
    out.map((o) => o.ok),
    [true, false, true, false, false, true],
  );
  t.same((out[0] as { value: unknown }).value, {
    code: 'abc1234', id: '9001', owner_id: USER, url: 'https://example.com/a', domain: 'example.com', created_at: now,
    created_ms: Date.parse(now), updated_at: now, expires_at: null, expires_ms: null, retired_at: null,
    password_protected: 0, imported_clicks: 0, imported_bots: 0,
  });
  t.match((out[1] as { ok: false; error: Error }).error.message, /UNIQUE/);
  t.match((out[3] as { ok: false; error: unknown }).error, { status: 404, code: 'not_found' });
  t.match((out[4] as { ok: false; error: unknown }).error, { status: 404, code: 'not_found' });
  t.equal(db.prepare("SELECT url FROM links WHERE code = 'abc1234'").pluck().get(), 'https://example.com/b');
  t.equal(count('SELECT COUNT(*) FROM links'), 1);
  const removed = group.commit([['removeLink', { code: 'abc1234' }]]);
  t.ok(removed[0].ok);
  t.equal(count('SELECT COUNT(*) FROM links'), 0);
});

t.test('a real writer thread answers each write with its own outcome, HttpErrors intact', async (t) => {
  const { port1, port2 } = new MessageChannel();
  const stats = new SharedArrayBuffer(24);
  const workerData: WriterData = { dataDir: dir, logLevel: 'silent', ports: [port2], stats, signals: Signals.allocate(signalLayout()).buffer };
  const worker = new Worker(join(__dirname, '../../src/writer/thread.js'), { workerData, transferList: [port2] });
  await new Promise<void>((resolve) => worker.once('message', () => resolve()));
  const client = WriterClient.overPort(port1);

  // Sent in one turn, so committed in one group.
  const results = await Promise.allSettled([
    client.run('createPost', post('6001')),
    client.run('deletePost', { userId: '2002', postId: '5001', now }), // not the author
    client.run('like', { userId: USER, postId: '6001', now }), // the post of this very batch
    client.run('createPost', post('6002', '424242')),
  ]);
  t.same(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled', 'rejected'],
  );
  const forbidden = (results[1] as PromiseRejectedResult).reason;
  t.ok(forbidden instanceof HttpError, 'rethrown as an HttpError');
  t.equal(forbidden.status, 403);
  t.equal(forbidden.code, 'forbidden');
  t.equal(forbidden.message, 'Only the author can delete a post.');
  const invalid = (results[3] as PromiseRejectedResult).reason as HttpError;
  t.equal(invalid.status, 400);
  t.same(invalid.body(), { error: 'invalid_request', message: 'reply_to: no such post', details: [{ path: 'reply_to', message: 'no such post' }] });
  t.equal(count('SELECT like_count FROM posts WHERE id = 6001'), 1);
  t.equal(new Float64Array(stats)[0], 1, 'one group commit');
  t.equal(new Float64Array(stats)[1], 4);

  // The writer dies: what is waiting and what comes later is answered 503, nothing hangs.
  const outcome = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e);
  const waiting = outcome(client.run('createPost', post('6003')));
  await worker.terminate();
  const after = outcome(client.run('createPost', post('6004')));
  const late = await waiting;
  // The waiting write may have committed before the writer died; if not, it is a 503.
  if (late !== null) t.match(late, { status: 503, code: 'unavailable' });
  const err = await after;
  t.ok(err instanceof HttpError);
  t.match(err, { status: 503, code: 'unavailable' });
});

t.test('a writer whose channel closes rejects every waiting write with 503', async (t) => {
  const { port1, port2 } = new MessageChannel();
  const client = WriterClient.overPort(port1);
  // (A timer keeps the test alive: the client does not hold the event loop open on its own.)
  const keepAlive = setInterval(() => {}, 1000);
  t.teardown(() => clearInterval(keepAlive));
  const got = new Promise<unknown[]>((resolve) => port2.on('message', resolve));
  const a = client.run('like', { userId: USER, postId: '1', now });
  const b = client.run('unlike', { userId: USER, postId: '1', now });
  const sent = await got;
  t.equal(sent.length, 6, 'both writes in one message');
  t.equal(client.pending, 2);
  port2.close(); // never answered
  await t.rejects(a, { status: 503, code: 'unavailable' });
  await t.rejects(b, { status: 503, code: 'unavailable' });
  t.equal(client.pending, 0);
  await t.rejects(client.run('like', { userId: USER, postId: '1', now }), { status: 503, code: 'unavailable' });
});

t.test('runs of plain posts are written together, with the rows and results of one write at a time', async (t) => {
  // The same batch twice: through the group commit (plain posts in bulk), and one write at a time.
  const batch = (base: number): Array<[string, unknown]> => {
    const id = (k: number) => String(base + k);
    const p = (k: number, parent: number | null = null) => ({ ...post(id(k), parent === null ? null : id(parent)), text: `post ${k}` });
    return [
      ['createPost', p(1)],
      ['createPost', p(2)],
      ['createPost', p(3, 1)], // a reply ends the run
      ...Array.from({ length: 40 }, (_, k) => ['createPost', p(10 + k)] as [string, unknown]),
      ['like', { userId: USER, postId: id(12), now }], // a like of a post made earlier in the run
      ['createPost', p(60)],
    ];
  };
  const rowsOf = (base: number) => {
    const posts = db
      .prepare('SELECT id - ? AS k, typeof(id) AS id_stored_as, author_id, text, media_ids, typeof(media_ids) AS media_stored_as, reply_to - ? AS reply, created_at, like_count, reply_count FROM posts WHERE id > ? AND id < ? ORDER BY id')
      .all(base, base, base, base + 100);
    const events = db
      .prepare('SELECT type, actor_id, recipient_id, CAST(post_id AS INTEGER) - ? AS k, typeof(post_id) AS stored_as, payload, created_at FROM events WHERE CAST(post_id AS INTEGER) > ? AND CAST(post_id AS INTEGER) < ? ORDER BY seq')
      .all(base, base, base + 100);
    return { posts, events };
  };
  const group = new GroupCommit(db, exec);
  const bulk = group.commit(batch(800000));
  t.same(group.stats, { commits: 1, writes: 45, reruns: 0, isolated: 0 });
  const single = db.transaction(() => batch(900000).map(([name, args]) => exec(name, args)))();
  // The two batches differ only in their ids' base: drop it from ids, alone or inside payloads.
  const strip = (v: unknown) => JSON.parse(JSON.stringify(v, (_k, x) => (typeof x === 'string' ? x.replace(/[89]000(\d\d)/g, (_m, k) => String(Number(k))) : x)));
  t.same(strip(bulk.map((o) => (o as { value: unknown }).value)), strip(single));
  const a = rowsOf(800000);
  const b = rowsOf(900000);
  t.equal(a.posts.length, 44);
  t.equal(a.events.length, 46, 'a post_created per post, a reply and a like');
  t.same(strip(a), strip(b));
  t.same(a.events[0], { type: 'post_created', actor_id: USER, recipient_id: null, k: 1, stored_as: 'text', payload: '{"reply_to":null}', created_at: now });
  t.same(a.posts[0], { k: 1, id_stored_as: 'integer', author_id: USER, text: 'post 1', media_ids: '[]', media_stored_as: 'text', reply: null, created_at: now, like_count: 0, reply_count: 1 }, 'post 1 has the reply post 3');
});
