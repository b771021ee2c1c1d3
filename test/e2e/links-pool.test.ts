// An exhausted code pool stalls creation with 503 while redirects keep working.
import t from 'tap';
import { rmSync } from 'node:fs';
import { startServer, testThreads, type Key, type TestServer } from '../helpers/server';
import { hasLimitHeaders, metric, shorten, waitFor } from './links-helpers';

let server: TestServer;
let alice: Key;

t.before(async () => {
  // Two codes at start-up and no refills (the low-water mark is 0). The creation limit barely
  // refills and the burst cap is wide, so the headers show exactly how many creations were used.
  server = await startServer({
    threads: testThreads(),
    config: {
      links: { pool_target: 2, pool_low_water: 0, pool_wait_ms: 300 },
      limits: { shorten: { capacity: 20, refill_per_second: 0.0001, burst_per_second: 100, daily_quota: 1000 } },
    },
  });
  alice = await server.keygen('alice');
  await waitFor('the initial pool fill', async () => ((await metric(server, 'perch_code_pool_size')) === 2 ? true : undefined));
});
t.teardown(() => server?.close());

t.test('pool empty: 503 unavailable with retry hints; redirects still 302', async (t) => {
  const a = await shorten(server, alice, { url: 'https://example.com/a' });
  const b = await shorten(server, alice, { url: 'https://example.com/b' });
  t.equal(a.status, 201);
  t.equal(b.status, 201);
  t.equal(await metric(server, 'perch_code_pool_size'), 0);
  const started = Date.now();
  const c = await shorten(server, alice, { url: 'https://example.com/c' });
  t.equal(c.status, 503);
  t.ok(Date.now() - started >= 250, 'creation waited briefly first');
  t.equal(c.json.error, 'unavailable');
  t.type(c.json.message, 'string');
  t.ok(Number.isInteger(c.json.retry_after_seconds) && c.json.retry_after_seconds >= 1);
  t.equal(c.headers.get('retry-after'), String(c.json.retry_after_seconds));
  t.ok(hasLimitHeaders(c), 'limiter headers on the 503');
  // Nothing was created, so the creation the 503 had taken was given back.
  t.equal(b.headers.get('x-ratelimit-remaining'), '18', 'two creations used');
  t.equal(c.headers.get('x-ratelimit-remaining'), '18', 'the 503 used up no creation');
  const again = await shorten(server, alice, { url: 'https://example.com/d' });
  t.equal(again.status, 503);
  t.equal(again.headers.get('x-ratelimit-remaining'), '18', 'nor did a second one');
  for (const r of [a, b]) {
    for (let i = 0; i < 10; i++) {
      const go = await server.get('/' + r.json.short_code);
      t.equal(go.status, 302);
    }
    t.equal((await server.get('/' + r.json.short_code)).headers.get('location'), r.json.url);
  }
  const list = await server.get('/api/links', { key: alice.key });
  t.equal(list.json.items.length, 2, 'the failed creation left nothing behind');
  const status = JSON.parse((await server.cli(['status', '--json'])).stdout);
  t.equal(status.links.code_pool_size, 0);
});

t.test('a new links.code_length applies to the next link, not after the old pool is used up', async (t) => {
  const first = await startServer({ threads: testThreads(), config: { links: { pool_target: 50, pool_low_water: 10 } } });
  const dataDir = first.dataDir;
  const bob = await first.keygen('bob');
  const before = await shorten(first, bob, { url: 'https://example.com/seven' });
  t.equal(before.json.short_code.length, 7);
  await first.stop('SIGTERM');
  const second = await startServer({ dataDir, threads: testThreads(), config: { links: { code_length: 9, pool_target: 50, pool_low_water: 10 } } });
  t.teardown(async () => {
    await second.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  t.ok(second.logs.some((l) => l.includes('pooled codes of another length discarded')), 'the discard is logged');
  for (let i = 0; i < 3; i++) {
    const r = await shorten(second, bob, { url: `https://example.com/nine/${i}` });
    t.equal(r.status, 201);
    t.match(r.json.short_code, /^[0-9A-Za-z]{9}$/, `link ${i + 1} has a 9-character code`);
  }
  t.equal((await second.get('/' + before.json.short_code)).status, 302, 'links made before keep working');
  t.equal(await metric(second, 'perch_code_pool_size'), 47);
});
