// The LMDB/SQLite pieces of the short-link capability, on real stores in a temporary data dir.
import t, { type Test } from 'tap';
import { rmSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { tempDataDir } from '../helpers/server';
import { openSqlite } from '../../src/store/sqlite';
import { migrateAll } from '../../src/capabilities';
import { openHotStore } from '../../src/store/lmdb';
import { LinkStore } from '../../src/links/store';
import { CodePool } from '../../src/links/code-pool';
import { ClickQueue, clickQueueState, drainClicks, ENTRY_BYTES, ENTRY_WINDOW_MS } from '../../src/links/clicks';
import { RedirectCache } from '../../src/links/cache';
import { prunableMinute, sweepExpiredLinks } from '../../src/links/tasks';
import { loadConfig } from '../../src/config';

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Mobile/15E148 Safari/604.1';
const dir = tempDataDir('perch-links-');
const sqlite = openSqlite(dir);
migrateAll(sqlite);
const hot = openHotStore(dir);
const store = new LinkStore(sqlite);
sqlite.prepare("INSERT INTO users (id, handle, handle_lower, created_at) VALUES ('1', 'u', 'u', '2026-01-01T00:00:00.000Z')").run();
t.teardown(async () => {
  sqlite.close();
  await hot.close();
  rmSync(dir, { recursive: true, force: true });
});

t.test('the code pool: refill to target, draws are unique, empty answers undefined', async (t) => {
  const pool = new CodePool(hot, 7);
  t.equal(pool.size(), 0);
  t.equal(pool.draw(), undefined);
  t.equal(pool.refill(store, 300, 7, 100), 300);
  t.equal(pool.size(), 300);
  t.equal(pool.refill(store, 300, 7), 0, 'already full');
  const drawn = new Set<string>();
  for (let i = 0; i < 300; i++) drawn.add(pool.draw()!);
  t.equal(drawn.size, 300);
  t.equal(pool.draw(), undefined);
  t.equal(store.issueCodes([...drawn].slice(0, 5)).length, 0, 'issued codes can never be registered again');
  const issued = (sqlite.prepare('SELECT COUNT(*) AS n FROM issued_codes').get() as { n: number }).n;
  t.equal(issued, 300);
});

t.test('the click queue drains exactly once into the aggregates', async (t) => {
  const now = Date.now();
  store.insert({ code: 'abcdefg', id: '100', ownerId: '1', url: 'https://example.com', domain: 'example.com', createdMs: now, expiresMs: null });
  const q = new ClickQueue(hot, 7);
  const before = store.processedEvents();
  for (let i = 0; i < 1234; i++) q.push('abcdefg', now, i % 2 ? 'ref.example' : '', i % 10 === 0, FIREFOX);
  q.push('gone123', now, '', false, FIREFOX);
  q.flush();
  for (let i = 0; i < 5000; i++) q.push('abcdefg', now, '', false, i % 5 === 0 ? IPHONE : FIREFOX);
  q.flush();
  await q.db.committed;
  const entries = [...q.db.getRange({})];
  t.equal(clickQueueState(q.db).depth, entries.length);
  t.ok(entries.length > 3, 'entries are bounded in size, not one per flush');
  const sizes = entries.map(({ key }) => q.db.getBinary(key)!.length);
  // Inside a page: LMDB keeps a key and value of up to 2,038 bytes in the page (4 KiB pages).
  t.ok(Math.max(...sizes) <= ENTRY_BYTES + 100, `about ENTRY_BYTES at most (${Math.max(...sizes)})`);
  // All but the two the flushes cut short.
  t.equal(sizes.filter((n) => n >= ENTRY_BYTES).length, sizes.length - 2, 'an entry is written once it holds ENTRY_BYTES');
  t.equal(drainClicks(q.db, store, 500, 20), 6235);
  t.same(clickQueueState(q.db), { depth: 0, lagSeconds: 0 });
  t.equal(store.processedEvents() - before, 6235);
  const daily = store.dailyCounts('abcdefg');
  t.same(daily.map((d) => [d.clicks, d.bots]), [[6234 - 124, 124]]);
  // People only: 1,110 of the first 1,234 and all 5,000 after, 1,000 of them from an iPhone.
  t.same(store.topBrowsers('abcdefg', 10), [{ name: 'Firefox', clicks: 5110 }, { name: 'Safari', clicks: 1000 }]);
  t.same(store.topOs('abcdefg', 10), [{ name: 'Linux', clicks: 5110 }, { name: 'iOS', clicks: 1000 }]);
  t.equal(drainClicks(q.db, store), 0, 'nothing twice');
});

/** Five links and three queue entries: links 1 and 2 (10 clicks), link 3 (5), links 4 and 5 (20). */
async function fiveLinksQueued(t: Test, first: number): Promise<{ q: ClickQueue; codes: string[] }> {
  const now = Date.now();
  const codes = [1, 2, 3, 4, 5].map((i) => `prt${first}${i}`.padEnd(7, '0'));
  codes.forEach((code, i) => store.insert({ code, id: String(first * 10 + i), ownerId: '1', url: 'https://example.com', domain: 'example.com', createdMs: now, expiresMs: null }));
  const q = new ClickQueue(hot, 7);
  for (let i = 0; i < 10; i++) q.push(i % 2 ? codes[0] : codes[1], now, '', false, '');
  q.flush();
  for (let i = 0; i < 5; i++) q.push(codes[2], now, '', false, '');
  q.flush();
  for (let i = 0; i < 20; i++) q.push(i % 2 ? codes[3] : codes[4], now, '', false, '');
  q.flush();
  await q.db.committed;
  t.equal(clickQueueState(q.db).depth, 3);
  return { q, codes };
}

const dailyClicks = (codes: string[]) => codes.map((c) => store.dailyCounts(c).map((d) => d.clicks));

t.test('a drain commits a batch in parts of at most partLinks links, each click once', async (t) => {
  const { q, codes } = await fiveLinksQueued(t, 90);
  const before = store.processedEvents();
  t.equal(drainClicks(q.db, store, 100_000, Infinity, 2), 35);
  t.equal(clickQueueState(q.db).depth, 0);
  t.same(dailyClicks(codes), [[5], [5], [5], [10], [10]]);
  t.equal(store.processedEvents() - before, 35);
  t.match(store.clickDrain(), { parts: 3, done: 3 }, 'five links in parts of two');
  t.equal(drainClicks(q.db, store, 100_000, Infinity, 2), 0, 'nothing twice');
});

t.test('a drain stopped between parts resumes after the last committed part', async (t) => {
  const { q, codes } = await fiveLinksQueued(t, 91);
  const before = store.processedEvents();
  // The second part's transaction fails, as if the process had died there.
  const real = store.addClickPart.bind(store);
  let calls = 0;
  store.addClickPart = (agg, progress) => {
    if (++calls === 2) throw new Error('stopped');
    real(agg, progress);
  };
  t.throws(() => drainClicks(q.db, store, 100_000, Infinity, 2), /stopped/);
  store.addClickPart = real;
  t.equal(clickQueueState(q.db).depth, 3, 'the entries are still queued');
  t.same(dailyClicks(codes), [[5], [5], [], [], []], 'the first part is in');
  t.match(store.clickDrain(), { parts: 3, partLinks: 2, done: 1 });
  t.equal(drainClicks(q.db, store, 100_000, Infinity, 1000), 35, 'resumed in the parts it was first split into, whatever the size now');
  t.same(dailyClicks(codes), [[5], [5], [5], [10], [10]], 'the rest counted once, the first part not again');
  t.equal(store.processedEvents() - before, 35);
  t.equal(clickQueueState(q.db).depth, 0);
});

t.test('a drain stopped after its last part only removes the batch from the queue', async (t) => {
  const { q, codes } = await fiveLinksQueued(t, 92);
  const before = store.processedEvents();
  const realTxn = q.db.transactionSync.bind(q.db);
  q.db.transactionSync = (() => {
    throw new Error('stopped');
  }) as typeof q.db.transactionSync;
  t.throws(() => drainClicks(q.db, store, 100_000, Infinity, 2), /stopped/);
  q.db.transactionSync = realTxn;
  t.equal(clickQueueState(q.db).depth, 3);
  t.same(dailyClicks(codes), [[5], [5], [5], [10], [10]]);
  t.equal(drainClicks(q.db, store, 100_000, Infinity, 2), 0, 'nothing counted again');
  t.equal(clickQueueState(q.db).depth, 0);
  t.same(dailyClicks(codes), [[5], [5], [5], [10], [10]]);
  t.equal(store.processedEvents() - before, 35);
});

t.test('queue entries written before User-Agents were kept still drain, without families', async (t) => {
  const now = Date.now();
  store.insert({ code: 'oldfmt1', id: '150', ownerId: '1', url: 'https://example.com', domain: 'example.com', createdMs: now, expiresMs: null });
  const q = new ClickQueue(hot, 8);
  await q.db.put([now, 8, 1], ['oldfmt1', now, 'ref.example', 0, 'oldfmt1', now, '', 1]);
  t.equal(drainClicks(q.db, store), 2);
  t.same(store.dailyCounts('oldfmt1').map((d) => [d.clicks, d.bots]), [[1, 1]]);
  t.same(store.topReferrers('oldfmt1', 10), [{ referrer: 'ref.example', clicks: 1 }]);
  t.same(store.topBrowsers('oldfmt1', 10), []);
});

t.test('codes an alias may not take: links, recent deletions, the pool', async (t) => {
  const now = Date.now();
  const day = 86_400_000;
  store.insertAlias({ code: 'my-alias', id: '300', ownerId: '1', url: 'https://example.com', domain: 'example.com', createdMs: now, expiresMs: null });
  t.equal(store.codeTaken('my-alias', now), true, 'a live link');
  t.equal(store.codeTaken('My-Alias', now), false, 'codes are case-sensitive');
  t.equal(store.issueCodes(['my-alias']).length, 0, 'the pool can never mint an alias');
  store.insertAlias({ code: 'expired1', id: '301', ownerId: '1', url: 'https://example.com', domain: 'example.com', createdMs: now - 2 * day, expiresMs: now - day });
  t.equal(store.codeTaken('expired1', now), true, 'an expired link');
  t.same(store.retireExpired(now, 10), ['expired1']);
  t.equal(store.codeTaken('expired1', now), true, 'a retired one');
  t.equal(store.remove('my-alias', now - 10 * day), true);
  t.equal(store.codeTaken('my-alias', now - 30 * day), true, 'deleted after the reuse window began');
  t.equal(store.codeTaken('my-alias', now - 5 * day), false, 'deleted before it: free again');
  const pool = new CodePool(hot, 9);
  pool.refill(store, 3, 9, 3);
  const pooled = pool.draw()!;
  t.equal(store.codeTaken(pooled, now), true, 'a code the pool minted (drawn, in flight, or still pooled)');
  t.equal(store.codeTaken('never-seen', now), false);
  while (pool.draw() !== undefined);
});

t.test('the redirect cache: miss → SQLite, TTL as safety net, dropShared', async (t) => {
  const now = Date.now();
  store.insert({ code: 'cache01', id: '101', ownerId: '1', url: 'https://old.example', domain: 'old.example', createdMs: now, expiresMs: null });
  const cache = new RedirectCache(hot, store, 1000);
  t.same(cache.lookup('cache01', now), ['https://old.example', 0, now, 0]);
  t.equal(cache.lookup('nosuch1', now), undefined);
  store.update('cache01', { target: { url: 'https://new.example', domain: 'new.example' } }, now);
  t.equal(cache.lookup('cache01', now + 500)![0], 'https://old.example', 'within the TTL the cache answers');
  t.equal(cache.lookup('cache01', now + 1000)![0], 'https://new.example', 'never beyond one TTL');
  store.update('cache01', { target: { url: 'https://newer.example', domain: 'newer.example' }, expiresMs: now + 5000 }, now);
  cache.forget('cache01');
  cache.invalidateShared('cache01', now + 1000);
  t.same(cache.lookup('cache01', now + 1001), ['https://newer.example', now + 5000, now + 1001, 0]);
  store.update('cache01', { expiresMs: null, passwordHash: 'scrypt$1$1$1$c2FsdA$a2V5' }, now);
  cache.forget('cache01');
  cache.invalidateShared('cache01', now + 1001);
  t.same(cache.lookup('cache01', now + 1002), ['https://newer.example', 0, now + 1002, 1], 'a password link is marked in its entry');
});

t.test('an edit changes only the fields it gives', async (t) => {
  const now = Date.now();
  store.insert({ code: 'edit001', id: '102', ownerId: '1', url: 'https://a.example/1', domain: 'a.example', createdMs: now, expiresMs: now + 60_000 });
  const fields = () => {
    const r = store.byCode('edit001')!;
    return [r.url, r.domain, r.expires_ms, r.password_protected];
  };
  t.ok(store.update('edit001', { target: { url: 'https://b.example/2', domain: 'b.example' } }, now));
  t.same(fields(), ['https://b.example/2', 'b.example', now + 60_000, 0], 'the target; the expiry kept');
  t.ok(store.update('edit001', { expiresMs: now + 120_000 }, now));
  t.same(fields(), ['https://b.example/2', 'b.example', now + 120_000, 0], 'the expiry; the target kept');
  t.ok(store.update('edit001', { passwordHash: 'scrypt$1$1$1$c2FsdA$a2V5' }, now));
  t.same(fields(), ['https://b.example/2', 'b.example', now + 120_000, 1], 'the password; the rest kept');
  t.ok(store.update('edit001', { expiresMs: null, passwordHash: null }, now));
  t.same(fields(), ['https://b.example/2', 'b.example', null, 0], 'no expiry, no password');
  t.notOk(store.update('nosuch1', { expiresMs: null }, now), 'no such link');
});

t.test("an invalidation from another thread reaches this thread's next lookup, though its LMDB snapshot is older", async (t) => {
  // HTTP threads are worker threads of one process: the thread that deletes a link writes the
  // tombstone, and the others learn of it through the publish/subscribe port (forget). lmdb-js keeps
  // a thread's read snapshot until a timer of its own, so a message handled in the same event-loop
  // turn as an earlier read must not leave the next lookup reading the entry from that snapshot.
  const now = Date.now();
  store.insert({ code: 'snap001', id: '9401', ownerId: '1', url: 'https://a.example/snap', domain: 'a.example', createdMs: now - 5000, expiresMs: null });
  const cache = new RedirectCache(hot, store, 3_600_000);
  t.same(cache.lookup('snap001', now)![0], 'https://a.example/snap');
  await cache.db.committed;
  const signal = new Int32Array(new SharedArrayBuffer(8));
  const source = `
    const { workerData, parentPort } = require('node:worker_threads');
    const { openHotStore } = require(workerData.lmdb);
    const { REDIRECT_CACHE_DB, TOMBSTONE } = require(workerData.cache);
    const hot = openHotStore(workerData.dir);
    const db = hot.db(REDIRECT_CACHE_DB);
    const signal = workerData.signal;
    parentPort.postMessage('ready');
    Atomics.wait(signal, 0, 0);
    db.putSync('snap001', ['', TOMBSTONE, workerData.at, 0]);
    Atomics.store(signal, 1, 1);
    Atomics.notify(signal, 1);
    hot.close().then(() => parentPort.postMessage('closed'));`;
  const worker = new Worker(source, {
    eval: true,
    workerData: { dir, signal, at: now + 1, lmdb: require.resolve('../../src/store/lmdb'), cache: require.resolve('../../src/links/cache') },
  });
  t.teardown(() => worker.terminate());
  await new Promise((resolve) => worker.once('message', resolve));
  const closed = new Promise((resolve) => worker.once('message', resolve));
  // One synchronous stretch, as one event-loop turn of an HTTP thread: a read takes a snapshot...
  hot.root.resetReadTxn();
  t.same(cache.db.get('snap001')?.[0], 'https://a.example/snap', 'the snapshot holds the entry');
  // ...the link is deleted and another thread writes the tombstone...
  store.remove('snap001');
  Atomics.store(signal, 0, 1);
  Atomics.notify(signal, 0);
  // The other thread may finish before this one starts waiting ('not-equal'): the flag is what counts.
  Atomics.wait(signal, 1, 0, 10_000);
  t.equal(Atomics.load(signal, 1), 1, 'the other thread wrote its tombstone');
  // ...and its message arrives before the next redirect of the code.
  cache.forget('snap001');
  t.equal(cache.lookup('snap001', now + 2), undefined, 'the deleted link is not read from the old snapshot');
  t.equal(cache.lookup('snap001', now + 3), undefined, 'nor remembered');
  await closed;
});

t.test('the expiry sweep retires expired links and drops them from the shared cache', async (t) => {
  const now = Date.now();
  store.insert({ code: 'sweep01', id: '201', ownerId: '1', url: 'https://a.example', domain: 'a.example', createdMs: now - 5000, expiresMs: now - 1000 });
  store.insert({ code: 'sweep02', id: '202', ownerId: '1', url: 'https://b.example', domain: 'b.example', createdMs: now - 5000, expiresMs: now + 60_000 });
  const cache = new RedirectCache(hot, store, 60_000);
  cache.lookup('sweep01', now);
  cache.lookup('sweep02', now);
  await cache.db.committed;
  const ctx = { config: loadConfig({ env: {} }), dataDir: dir, sqlite, hot };
  const farPast = prunableMinute(0);
  t.ok(store.sweepDue(now, farPast), 'an expired link makes the sweep due');
  const r = sweepExpiredLinks(ctx);
  t.equal(r.retired, 1);
  t.notOk(store.sweepDue(now, farPast), 'nothing left to retire, no minute bucket that old');
  t.ok(store.sweepDue(now + 60_000, farPast), 'the other link once it expires');
  t.ok(store.byCode('sweep01')!.retired_at, 'retired');
  t.equal(store.byCode('sweep02')!.retired_at, null, 'not yet expired');
  hot.root.resetReadTxn();
  t.equal(cache.db.get('sweep01'), undefined, 'dropped from the shared cache');
  t.ok(cache.db.get('sweep02'));
  t.same(store.target('sweep01'), { url: 'https://a.example', expires_ms: now - 1000, protected: 0 }, 'still answers 410 from SQLite');
  t.equal(sweepExpiredLinks(ctx).retired, 0, 'idempotent');
});

t.test('a cache fill read from SQLite before an invalidation never lands after it', async (t) => {
  const now = Date.now();
  store.insert({ code: 'race001', id: '9301', ownerId: '1', url: 'https://a.example/old', domain: 'a.example', createdMs: now - 5000, expiresMs: null });
  const cache = new RedirectCache(hot, store, 3_600_000);
  // Another thread's lookup: a miss read from SQLite, its fill of the shared level not yet
  // committed (lmdb-js commits it later, in a batch of its own)...
  t.same(cache.lookup('race001', now)![0], 'https://a.example/old');
  // ...while this thread deletes the link and invalidates, synchronously, after its commit.
  store.remove('race001');
  cache.invalidateShared('race001', now + 1);
  cache.forget('race001');
  await cache.db.committed;
  await cache.db.flushed;
  hot.root.resetReadTxn();
  t.equal(cache.lookup('race001', now + 2), undefined, 'the stale fill did not bring the deleted link back');

  // An invalidation never keeps a fresh read out: a lookup after it fills the cache again.
  store.insert({ code: 'race002', id: '9302', ownerId: '1', url: 'https://a.example/v1', domain: 'a.example', createdMs: now, expiresMs: null });
  cache.invalidateShared('race002', now);
  t.same(cache.lookup('race002', now + 5)![0], 'https://a.example/v1');
  await cache.db.committed;
  hot.root.resetReadTxn();
  t.same(cache.db.get('race002')?.[0], 'https://a.example/v1', 'filled after the invalidation');
});
