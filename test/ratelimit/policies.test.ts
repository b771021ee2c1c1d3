import t from 'tap';
import { rmSync } from 'node:fs';
import { loadConfig, type Config } from '../../src/config';
import { HttpError } from '../../src/http/errors';
import { clientIp, normaliseIp } from '../../src/http/client-ip';
import { LocalLimiter } from '../../src/ratelimit/local';
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
  const limits = new RateLimits(config, new SharedLimiter(hot), { rejected: (n) => rejected.push(n) }, 1);
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
  t.same(err.body(), { error: 'rate_limited', message: 'Too many requests; slow down.', retry_after_seconds: 1 });
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
  // Every 200 ms the burst cap regains one token (net 0) while the bucket loses 0.93: from 19.4 s
  // the bucket is the binding limit (a tie at 3 goes to the one that resets last).
  t.same(more, ['5:3', '5:3', '20:3', '20:2', '20:1', '20:0', 429, 429]);
});

t.test('search tiers have independent buckets per key', async (t) => {
  const { limits } = setup(t);
  for (let i = 0; i < 10; i++) limits.enforceSearch('k', 'relevance', NOW);
  t.equal(caught(() => limits.enforceSearch('k', 'relevance', NOW)).status, 429);
  const recent = limits.enforceSearch('k', 'recent', NOW);
  t.same(recent, { 'X-RateLimit-Limit': '60', 'X-RateLimit-Remaining': '59', 'X-RateLimit-Reset': String(NOW_S + 1) });
  const err = caught(() => limits.enforceSearch('k', 'relevance', NOW));
  t.equal(err.body().retry_after_seconds, 6, 'one token per ~6 s');
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
  t.same(err.body(), { error: 'rate_limited', message: 'Account flagged.', retry_after_seconds: 600 });
  t.equal(err.headers['X-RateLimit-Reset'], String(NOW_S + 600));
  t.same(rejected, ['anomaly']);
});

t.test('the loose redirect limiter splits capacity across threads and sweeps idle clients', async (t) => {
  const local = new LocalLimiter({ capacity: 1000, refillPerSecond: 500 }, 2, 'redirect');
  t.teardown(() => local.close());
  t.same(local.spec, { capacity: 500, refillPerSecond: 250 });
  let passed = 0;
  for (let i = 0; i < 600; i++) if (local.take('10.0.0.1', NOW).allowed) passed++;
  t.equal(passed, 500);
  t.equal(local.take('10.0.0.2', NOW).remaining, 499, 'per client');
  const d = local.take('10.0.0.1', NOW);
  t.equal(d.allowed, false);
  t.equal(d.retryAfterSeconds, 1);
  t.equal(local.size, 2);
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
