import t from 'tap';
import { Worker } from 'node:worker_threads';
import { rmSync } from 'node:fs';
import { loadConfig, type Config } from '../../src/config';
import { HttpError } from '../../src/http/errors';
import { clientIp } from '../../src/http/client-ip';
import { normaliseIp } from '../../src/core/ip-literal';
import { IpBuckets } from '../../src/ratelimit/ip-buckets';
import { RateLimits } from '../../src/ratelimit/policies';
import { SharedLimiter } from '../../src/ratelimit/shared';
import { openHotStore } from '../../src/store/lmdb';
import { tempDataDir } from '../helpers/server';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const NOW_S = NOW / 1000;

function setup(t: { teardown(fn: () => unknown): void }, overrides: Record<string, unknown> = {}) {
  const dir = tempDataDir();
  const hot = openHotStore(dir);
  const rejected: string[] = [];
  const config: Config = loadConfig({ env: {}, overrides: overrides as never });
  const limits = new RateLimits(config, new SharedLimiter(hot), { rejected: (n) => rejected.push(n) });
  t.teardown(async () => {
    limits.redirect.close();
    await hot.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  });
  return { hot, limits, rejected };
}

function caught(fn: () => unknown): HttpError {
  try {
    fn();
  } catch (err) {
    return err as HttpError;
  }
  throw new Error('expected a throw');
}

t.test('shorten: default limits, burst cap binds first, 429 after 5 in one second', async (t) => {
  const { limits, rejected } = setup(t);
  const first = limits.enforceShorten('k1', NOW);
  t.same(first, { 'X-RateLimit-Limit': '5', 'X-RateLimit-Remaining': '4', 'X-RateLimit-Reset': String(NOW_S + 1) });
  for (let i = 0; i < 4; i++) limits.enforceShorten('k1', NOW);
  const err = caught(() => limits.enforceShorten('k1', NOW));
  t.equal(err.status, 429);
  t.same(err.body(), { error: 'rate_limited', message: 'Too many requests; slow down.', retry_after_seconds: 1, limit: 'shorten_burst' });
  t.equal(err.headers['Retry-After'], '1');
  t.equal(err.headers['X-RateLimit-Limit'], '5');
  t.equal(err.headers['X-RateLimit-Remaining'], '0');
  t.same(rejected, ['shorten_burst']);
  t.same(limits.peekShorten('k1', NOW), { 'X-RateLimit-Limit': '5', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(NOW_S + 1) });
  t.equal(limits.enforceShorten('k2', NOW)['X-RateLimit-Remaining'], '4', 'another key has its own limits');
});

t.test('shorten: after the burst window the 20-token bucket binds', async (t) => {
  const { limits } = setup(t);
  let last: Record<string, string> = {};
  for (let i = 0; i < 20; i++) last = limits.enforceShorten('k', NOW + i * 1000);
  // 20 taken over 19 s while refilling 1/3 per s: 20 - 20 + 19 * 0.3333 = 6.33 tokens.
  t.equal(last['X-RateLimit-Limit'], '5', 'burst still binds with 4 left vs 6');
  const more = [];
  for (let i = 0; i < 8; i++) {
    try {
      const h = limits.enforceShorten('k', NOW + 19_000 + i * 200);
      more.push(`${h['X-RateLimit-Limit']}:${h['X-RateLimit-Remaining']}`);
    } catch (err) {
      more.push((err as HttpError).status);
    }
  }
  // The burst cap lets five through in any one second: 19.0 (the 20th), 19.0, 19.2, 19.4, 19.6,
  // and refuses 19.8. At 20.0 the two of 19.0 have left its window, but the bucket, losing 0.93 a
  // creation, is down to one: it binds (a tie at 1 goes to the one that resets last), and is out
  // at 20.4.
  t.same(more, ['5:3', '5:2', '5:1', '5:0', 429, '20:1', '20:0', 429]);
});

t.test('shorten: the burst cap counts any one second, not a bucket that refills (five, a pause, then one more waits)', async (t) => {
  const { limits, rejected } = setup(t);
  for (let i = 0; i < 5; i++) limits.enforceShorten('k', NOW + i * 10);
  // A bucket of 5 refilling 5 a second would have 3.5 tokens again after 0.7 s.
  const err = caught(() => limits.enforceShorten('k', NOW + 700));
  t.equal(err.status, 429);
  t.equal(err.body().limit, 'shorten_burst');
  t.equal(err.headers['Retry-After'], '1', 'the first of the five leaves the window at 1.0 s');
  t.same(rejected, ['shorten_burst']);
  t.equal(limits.enforceShorten('k', NOW + 1000)['X-RateLimit-Remaining'], '0', 'at 1.0 s one passes, and fills the window again');
  t.equal(caught(() => limits.enforceShorten('k', NOW + 1005)).status, 429);
  t.equal(limits.enforceShorten('k', NOW + 1010)['X-RateLimit-Remaining'], '0', 'the second leaves at 1.01 s');
});

t.test('shorten: a burst cap above the window limit is kept as a bucket', async (t) => {
  const { limits } = setup(t, { limits: { shorten: { capacity: 10_000, refill_per_second: 1, burst_per_second: 1000, daily_quota: 100_000 } } });
  for (let i = 0; i < 1000; i++) limits.enforceShorten('k', NOW);
  t.equal(caught(() => limits.enforceShorten('k', NOW)).body().limit, 'shorten_burst');
  // Half a second later, a bucket has refilled 500.
  for (let i = 0; i < 500; i++) limits.enforceShorten('k', NOW + 500);
  t.equal(caught(() => limits.enforceShorten('k', NOW + 500)).status, 429);
});

t.test('the 429 names the limit that was hit: the daily quota, when it is the one out of requests', async (t) => {
  const { limits, rejected } = setup(t, { limits: { shorten: { capacity: 100, refill_per_second: 1, burst_per_second: 100, daily_quota: 3 } } });
  for (let i = 0; i < 3; i++) limits.enforceShorten('k', NOW + i);
  const err = caught(() => limits.enforceShorten('k', NOW + 3));
  t.equal(err.status, 429);
  t.equal(err.body().limit, 'shorten_daily');
  t.equal(err.headers['X-RateLimit-Limit'], '3', 'the headers describe the same limit');
  t.same(rejected, ['shorten_daily']);
});

t.test('search tiers have independent buckets per key', async (t) => {
  const { limits } = setup(t);
  for (let i = 0; i < 10; i++) limits.enforceSearch('k', 'relevance', NOW);
  t.equal(caught(() => limits.enforceSearch('k', 'relevance', NOW)).status, 429);
  const recent = limits.enforceSearch('k', 'recent', NOW);
  t.same(recent, { 'X-RateLimit-Limit': '60', 'X-RateLimit-Remaining': '59', 'X-RateLimit-Reset': String(NOW_S + 1) });
  const err = caught(() => limits.enforceSearch('k', 'relevance', NOW));
  t.equal(err.body().retry_after_seconds, 6, 'one token per ~6 s');
  t.equal(err.body().limit, 'search_relevance');
  t.equal(limits.enforceSearch('other', 'relevance', NOW)['X-RateLimit-Remaining'], '9');
});

t.test('store failure: shorten fails closed with 503, search fails open', async (t) => {
  const { hot, limits } = setup(t);
  await hot.close();
  const err = caught(() => limits.enforceShorten('k', NOW));
  t.equal(err.status, 503);
  t.equal(err.body().error, 'unavailable');
  t.equal(err.headers['Retry-After'], '1');
  const open = limits.enforceSearch('k', 'recent', NOW);
  t.equal(open['X-RateLimit-Limit'], '60');
});

t.test('on_store_error is configurable per route', async (t) => {
  const { hot, limits } = setup(t, { limits: { on_store_error: { shorten: 'open', search: 'closed', redirect: 'open' } } });
  await hot.close();
  t.equal(limits.enforceShorten('k', NOW)['X-RateLimit-Limit'], '20');
  t.equal(caught(() => limits.enforceSearch('k', 'recent', NOW)).status, 503);
});

t.test('a throttled (flagged) key gets the contract 429', async (t) => {
  const { limits, rejected } = setup(t);
  const err = caught(() => limits.throttled('k', 599.2, 'Account flagged.', NOW));
  t.equal(err.status, 429);
  t.same(err.body(), { error: 'rate_limited', message: 'Account flagged.', retry_after_seconds: 600, limit: 'anomaly' });
  t.equal(err.headers['X-RateLimit-Reset'], String(NOW_S + 600));
  t.same(rejected, ['anomaly']);
});

t.test('the loose redirect limiter: the configured bucket per client, one table for every thread', async (t) => {
  const table = IpBuckets.allocate();
  // Two limiters on one table stand for two HTTP threads.
  const [a, b] = [new IpBuckets({ capacity: 1000, refillPerSecond: 500 }, table, 'redirect'), new IpBuckets({ capacity: 1000, refillPerSecond: 500 }, table, 'redirect')];
  t.same(a.spec, { capacity: 1000, refillPerSecond: 500 }, 'not divided among threads');
  let passed = 0;
  for (let i = 0; i < 1200; i++) if ((i % 2 ? a : b).take('10.0.0.1', NOW).allowed) passed++;
  t.equal(passed, 1000, 'one bucket, whichever thread takes');
  t.equal(b.take('10.0.0.2', NOW).remaining, 999, 'per client');
  const d = a.take('10.0.0.1', NOW);
  t.equal(d.allowed, false);
  t.equal(d.retryAfterSeconds, 1);
  t.equal(d.limit, 1000);
  t.equal(a.take('10.0.0.1', NOW + 1000).remaining, 499, 'refills at 500/s');
  t.equal(a.size, 0, 'counted against the clock: at the real time these buckets are long full');
});

t.test('the redirect table: a full bucket frees its slot; more clients than slots replace the fullest', async (t) => {
  const table = IpBuckets.allocate(8);
  const limiter = new IpBuckets({ capacity: 2, refillPerSecond: 1 }, table, 'redirect');
  // 8 slots, 8 probes: 8 clients fit, each down to 0 tokens.
  const clients = Array.from({ length: 8 }, (_, i) => `192.0.2.${i}`);
  clients.forEach((c, i) => {
    for (let k = 0; k < 2; k++) t.ok(limiter.take(c, NOW + i * 10 + k).allowed);
  });
  for (const c of clients) t.notOk(limiter.take(c, NOW + 100).allowed, `${c} is limited`);
  // A ninth client replaces the bucket closest to full: the one taken from longest ago.
  for (let k = 0; k < 2; k++) t.ok(limiter.take('198.51.100.1', NOW + 200).allowed);
  t.notOk(limiter.take('198.51.100.1', NOW + 200).allowed, 'the ninth client is limited like the others');
  t.notOk(limiter.take(clients[7], NOW + 200).allowed, 'the most recent clients keep their buckets');
  t.notOk(limiter.take(clients[1], NOW + 200).allowed);
  t.ok(limiter.take(clients[0], NOW + 200).allowed, 'the client taken from longest ago starts again from a full bucket');
  // Two seconds later every bucket is full again, so any client can take any slot.
  for (let i = 0; i < 8; i++) t.ok(limiter.take(`203.0.113.${i}`, NOW + 3000).allowed);
  t.throws(() => IpBuckets.allocate(100), /power of two/);
});

t.test('the redirect table holds under two threads taking at once', async (t) => {
  const table = IpBuckets.allocate();
  const path = require.resolve('../../src/ratelimit/ip-buckets');
  const code = `
    const { workerData, parentPort } = require('node:worker_threads');
    const { IpBuckets } = require(workerData.path);
    const limiter = new IpBuckets({ capacity: 20000, refillPerSecond: 0.001 }, workerData.table, 'redirect');
    let allowed = 0;
    const now = Date.now();
    for (let i = 0; i < 30000; i++) if (limiter.take(i % 3 ? '10.1.1.1' : '10.2.2.' + (i % 200), now).allowed) allowed++;
    parentPort.postMessage(allowed);`;
  const run = () =>
    new Promise<number>((resolve, reject) => {
      const w = new Worker(code, { eval: true, workerData: { table, path } });
      w.once('message', resolve);
      w.once('error', reject);
    });
  const [x, y] = await Promise.all([run(), run()]);
  const limiter = new IpBuckets({ capacity: 20000, refillPerSecond: 0.001 }, table, 'redirect');
  // 2 × 20,000 takes of the shared client against one bucket of 20,000: exactly 20,000 pass; the
  // 200 others never run out.
  const shared = x + y - 2 * 10000;
  t.equal(shared, 20000, 'no take lost or doubled');
  t.equal(limiter.take('10.1.1.1', Date.now()).allowed, false);
});

t.test('client IP: socket peer, or X-Forwarded-For only from a trusted proxy', async (t) => {
  const none = new Set<string>();
  const proxy = new Set(['127.0.0.1', '10.0.0.2']);
  t.equal(normaliseIp('0000:0000:0000:0000:0000:ffff:7f00:0001'), '127.0.0.1');
  t.equal(normaliseIp('::ffff:192.168.1.9'), '192.168.1.9');
  t.equal(clientIp('127.0.0.1', '203.0.113.5', none), '127.0.0.1', 'untrusted peer: header ignored');
  t.equal(clientIp('127.0.0.1', '203.0.113.5', proxy), '203.0.113.5');
  t.equal(clientIp('127.0.0.1', '1.1.1.1, 203.0.113.5, 10.0.0.2', proxy), '203.0.113.5', 'right-most untrusted hop');
  t.equal(clientIp('127.0.0.1', '', proxy), '127.0.0.1');
  t.equal(clientIp('198.51.100.7', '203.0.113.5', proxy), '198.51.100.7');
});
