// Rate limiting over HTTP: one bucket shared by every thread and process, the contract headers,
// independence of keys, and redirects never touching the creation bucket.
import t from 'tap';
import { pinnedThreadsTest } from '../helpers/command-test';
import { rmSync } from 'node:fs';
import { startServer, tempDataDir, type TestServer } from '../helpers/server';
import { create, limitHeaders, shorten } from './links-helpers';

pinnedThreadsTest('two HTTP threads and a second process share one bucket of 10: exactly 10 pass', async (t) => {
  const dataDir = tempDataDir();
  const config = {
    limits: { shorten: { capacity: 10, refill_per_second: 0.0001, burst_per_second: 1000, daily_quota: 100000 } },
    anomaly: { max_links: 1000, max_same_domain: 1000 },
  };
  const a = await startServer({ dataDir, threads: 2, config });
  const b = await startServer({ dataDir, threads: 1, config });
  t.teardown(async () => {
    await a.close();
    await b.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const key = await a.keygen('contended');
  // Many connections per server, so both of A's threads take requests.
  const attempts: Array<Promise<number>> = [];
  for (let i = 0; i < 60; i++) {
    const server = i % 3 === 2 ? b : a;
    attempts.push(shorten(server, key, { url: `https://example.org/c/${i}` }).then((r) => r.status));
  }
  const statuses = await Promise.all(attempts);
  t.equal(statuses.filter((s) => s === 201).length, 10, `statuses: ${statuses.join(',')}`);
  t.equal(statuses.filter((s) => s === 429).length, 50);
  const links = await a.get('/api/links?limit=100', { key: key.key });
  t.equal(links.json.items.length, 10, 'exactly 10 links exist');
});

t.test('headers, 429 body, independent keys, redirects leave the creation bucket alone', async (t) => {
  const server: TestServer = await startServer({
    config: { limits: { shorten: { capacity: 4, refill_per_second: 0.01, burst_per_second: 100, daily_quota: 1000 } } },
  });
  t.teardown(() => server.close());
  const alice = await server.keygen('alice');
  const bob = await server.keygen('bob');

  const nowS = Math.floor(Date.now() / 1000);
  const first = await shorten(server, alice, { url: 'https://example.org/1' });
  t.equal(first.status, 201);
  const h1 = limitHeaders(first);
  t.same({ limit: h1.limit, remaining: h1.remaining }, { limit: 4, remaining: 3 });
  t.ok(h1.reset >= nowS + 99 && h1.reset <= nowS + 102, `reset ${h1.reset} is ~100 s ahead (1 token at 0.01/s)`);

  // Redirects have their own, per-IP limit: following the link many times costs no creation token.
  const code = first.json.short_code as string;
  for (let i = 0; i < 30; i++) t.equal((await server.get(`/${code}`)).status, 302);
  const redirect = await server.get(`/${code}`);
  t.equal(Number(redirect.headers.get('x-ratelimit-limit')), 1000, 'the configured per-IP bucket, whatever the number of threads');

  const second = await shorten(server, alice, { url: 'https://example.org/2' });
  t.equal(limitHeaders(second).remaining, 2, 'remaining decrements by one per creation only');

  const invalid = await shorten(server, alice, { url: 'ftp://example.org/x' });
  t.equal(invalid.status, 400);
  t.equal(limitHeaders(invalid).remaining, 2, 'a 400 carries the headers and consumes nothing');

  await create(server, alice, 'https://example.org/3');
  await create(server, alice, 'https://example.org/4');
  const limited = await shorten(server, alice, { url: 'https://example.org/5' });
  t.equal(limited.status, 429);
  t.same(Object.keys(limited.json).sort(), ['error', 'limit', 'message', 'retry_after_seconds']);
  t.equal(limited.json.limit, 'shorten', 'the bucket ran out (capacity 4 here), not the burst cap or the quota');
  t.equal(limited.json.error, 'rate_limited');
  t.ok(Number.isInteger(limited.json.retry_after_seconds) && limited.json.retry_after_seconds >= 1);
  t.ok(limited.json.retry_after_seconds <= 100, `retry after ${limited.json.retry_after_seconds}`);
  t.equal(limited.headers.get('retry-after'), String(limited.json.retry_after_seconds));
  t.same({ limit: limitHeaders(limited).limit, remaining: limitHeaders(limited).remaining }, { limit: 4, remaining: 0 });

  const other = await shorten(server, bob, { url: 'https://example.org/bob' });
  t.equal(other.status, 201, 'another key has its own bucket');
  t.equal(limitHeaders(other).remaining, 3);

  // No key, or an unknown one: a 401 that shows the limits a key starts with, and takes nothing.
  for (const [what, key] of [['no key', undefined], ['an unknown key', 'perch_unknown']] as const) {
    for (const path of ['/api/shorten', '/api/links/bulk']) {
      const json = path === '/api/shorten' ? { url: 'https://example.org/anon' } : { links: [{ url: 'https://example.org/anon' }] };
      const anonymous = await server.post(path, { key, json });
      t.equal(anonymous.status, 401, `${path}, ${what}`);
      const h = limitHeaders(anonymous);
      t.same({ limit: h.limit, remaining: h.remaining }, { limit: 4, remaining: 4 }, `${path}, ${what}: every bucket full`);
      t.ok(h.reset >= nowS && h.reset <= Math.floor(Date.now() / 1000) + 1, `${path}, ${what}: full now (reset ${h.reset})`);
    }
  }
  t.equal(limitHeaders(await shorten(server, bob, { url: 'https://example.org/bob2' })).remaining, 2, "bob's bucket as it was, less this one");

  const metrics = await server.get('/metrics');
  t.match(metrics.text, /perch_rate_limit_rejections_total\{limit="shorten"\} 1/);
});
