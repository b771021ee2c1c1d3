// POST /api/shorten, GET /api/links and GET /api/links/{code}: every rule of CONTRACT §2.
import t from 'tap';
import { startServer, testThreads, type Key, type TestServer } from '../helpers/server';
import { create, hasLimitHeaders, limitHeaders, shorten } from './links-helpers';

let server: TestServer;
let alice: Key;
let bob: Key;
let admin: Key;

t.before(async () => {
  server = await startServer({
    threads: testThreads(),
    config: {
      server: { public_origin: 'https://sho.rt' },
      links: { blocklist: ['evil.example', 'Phish.Test'] },
      // These tests create links in bursts; the anomaly detector has its own test.
      anomaly: { max_links: 10000, max_same_domain: 10000 },
      // A slow refill, so that token counts in these tests change only by consumption.
      limits: { shorten: { capacity: 200, refill_per_second: 0.001, burst_per_second: 200, daily_quota: 1000 } },
    },
  });
  alice = await server.keygen('alice');
  bob = await server.keygen('bob');
  admin = await server.keygen('root', true);
});
t.teardown(() => server?.close());

t.test('201 with Location, the contract body and limiter headers', async (t) => {
  const expires = new Date(Date.now() + 3600_000).toISOString();
  const r = await shorten(server, alice, { url: 'https://example.com/a?b=c#d', expires_at: expires });
  t.equal(r.status, 201);
  const code = r.json.short_code;
  t.match(code, /^[0-9A-Za-z]{7}$/);
  t.equal(r.headers.get('location'), `/api/links/${code}`);
  t.same(Object.keys(r.json).sort(), ['created_at', 'expires_at', 'password_protected', 'short_code', 'short_url', 'url']);
  t.equal(r.json.password_protected, false);
  t.equal(r.json.short_url, `https://sho.rt/${code}`);
  t.equal(r.json.url, 'https://example.com/a?b=c#d');
  t.equal(r.json.expires_at, expires);
  t.match(r.json.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.ok(hasLimitHeaders(r), 'X-RateLimit-* present');

  const noExpiry = await shorten(server, alice, { url: 'http://example.org' });
  t.equal(noExpiry.status, 201);
  t.equal(noExpiry.json.expires_at, null);
  const nullExpiry = await shorten(server, alice, { url: 'http://example.org', expires_at: null });
  t.equal(nullExpiry.status, 201);
  t.not(nullExpiry.json.short_code, noExpiry.json.short_code, 'every creation gets its own code');
});

t.test('codes are unique and never reserved', async (t) => {
  const codes = new Set<string>();
  for (let i = 0; i < 40; i++) codes.add(await create(server, bob, `https://example.net/${i}`));
  t.equal(codes.size, 40);
  for (const c of codes) t.notOk(['api', 'ws', 'app', 'assets', 'media', 'healthz', 'readyz', 'metrics'].includes(c.toLowerCase()));
});

t.test('authentication is required', async (t) => {
  const r = await server.post('/api/shorten', { json: { url: 'https://example.com' } });
  t.equal(r.status, 401);
  t.equal(r.json.error, 'unauthorized');
  const bad = await server.post('/api/shorten', { key: 'perch_nope', json: { url: 'https://example.com' } });
  t.equal(bad.status, 401);
});

t.test('every validation rule answers 400 with details, limiter headers, and consumes nothing', async (t) => {
  const before = limitHeaders(await shorten(server, alice, { url: 'https://example.com/probe' }));
  const past = new Date(Date.now() - 1000).toISOString();
  const cases: Array<[unknown, string]> = [
    [{}, 'url'],
    [{ url: 42 }, 'url'],
    [{ url: 'example.com/no-scheme' }, 'url'],
    [{ url: '/relative/path' }, 'url'],
    [{ url: 'ftp://example.com/file' }, 'url'],
    [{ url: 'javascript:alert(1)' }, 'url'],
    [{ url: 'mailto:someone@example.com' }, 'url'],
    [{ url: 'http://' }, 'url'],
    // A host only a browser's parser finds (the text as sent is what a redirect sends back).
    [{ url: 'http:///x' }, 'url'],
    [{ url: 'https:example.com/p' }, 'url'],
    [{ url: 'http:\\\\example.com\\path' }, 'url'],
    [{ url: 'https://example.com/' + 'a'.repeat(2030) }, 'url'],
    [{ url: 'https://sho.rt/abcdefg' }, 'url'],
    [{ url: 'http://SHO.RT/x' }, 'url'],
    [{ url: 'https://sho.rt@evil.example/x' }, 'url'],
    [{ url: 'https://evil.example/x' }, 'url'],
    [{ url: 'https://login.evil.example/x' }, 'url'],
    [{ url: 'https://a.b.phish.test/' }, 'url'],
    [{ url: 'https://example.com', expires_at: past }, 'expires_at'],
    [{ url: 'https://example.com', expires_at: 'tomorrow' }, 'expires_at'],
    [{ url: 'https://example.com', expires_at: '2099-01-01' }, 'expires_at'],
    [{ url: 'https://example.com', expires_at: 12345 }, 'expires_at'],
    [{ url: 'https://example.com', colour: 'blue' }, 'colour'],
  ];
  for (const [body, path] of cases) {
    const r = await shorten(server, alice, body as Record<string, unknown>);
    t.equal(r.status, 400, JSON.stringify(body).slice(0, 80));
    t.equal(r.json.error, 'invalid_request');
    t.type(r.json.message, 'string');
    t.ok(r.json.details.some((d: { path: string }) => d.path === path), `details name ${path}: ${JSON.stringify(r.json.details)}`);
    t.ok(hasLimitHeaders(r), 'limiter headers on a 400');
  }
  const exactly2048 = 'https://example.com/' + 'a'.repeat(2048 - 20);
  t.equal(exactly2048.length, 2048);
  t.equal((await shorten(server, alice, { url: exactly2048 })).status, 201, '2048 characters is allowed');
  t.equal((await shorten(server, alice, { url: 'https://notevil.example/x' })).status, 201, 'a blocklisted name is not a suffix match');
  const after = limitHeaders(await shorten(server, alice, { url: 'https://example.com/probe' }));
  t.equal(after.remaining, before.remaining - 3, 'the 400s consumed no tokens (only the 3 creations did)');
});

t.test('bodies that are not JSON', async (t) => {
  const wrongType = await server.request('POST', '/api/shorten', { key: alice.key, body: 'url=x', headers: { 'content-type': 'text/plain' } });
  t.equal(wrongType.status, 415);
  const broken = await server.request('POST', '/api/shorten', { key: alice.key, body: '{"url":', headers: { 'content-type': 'application/json' } });
  t.equal(broken.status, 400);
  const notObject = await server.request('POST', '/api/shorten', { key: alice.key, body: '["https://example.com"]', headers: { 'content-type': 'application/json' } });
  t.equal(notObject.status, 400);
  const tooLarge = await server.request('POST', '/api/shorten', { key: alice.key, json: { url: 'https://example.com/' + 'a'.repeat(17_000) } });
  t.equal(tooLarge.status, 413);
  for (const r of [wrongType, broken, notObject, tooLarge]) t.ok(hasLimitHeaders(r), `limiter headers on the ${r.status}`);
});

t.test('URLs with non-ASCII characters are stored percent-encoded', async (t) => {
  const r = await shorten(server, alice, { url: 'https://example.com/päth?q=ü' });
  t.equal(r.status, 201);
  t.equal(r.json.url, 'https://example.com/p%C3%A4th?q=%C3%BC');
  const go = await server.get('/' + r.json.short_code);
  t.equal(go.headers.get('location'), 'https://example.com/p%C3%A4th?q=%C3%BC');
});

t.test('details: owner and admin see them, anybody else gets 404', async (t) => {
  const code = await create(server, alice, 'https://example.com/details');
  const mine = await server.get(`/api/links/${code}`, { key: alice.key });
  t.equal(mine.status, 200);
  t.same(Object.keys(mine.json).sort(), ['clicks', 'created_at', 'expires_at', 'password_protected', 'short_code', 'short_url', 'status', 'updated_at', 'url']);
  t.equal(mine.json.status, 'active');
  t.same(Object.keys(mine.json.clicks).sort(), ['bots', 'browsers', 'daily', 'imported', 'last_24h', 'os', 'referrers', 'total']);
  t.same(mine.json.clicks.imported, { total: 0, bots: 0 });
  t.equal(mine.json.clicks.daily.length, 30);
  t.equal((await server.get(`/api/links/${code}`, { key: admin.key })).status, 200, 'admin');
  const other = await server.get(`/api/links/${code}`, { key: bob.key });
  t.equal(other.status, 404);
  t.equal(other.json.error, 'not_found');
  t.equal((await server.get('/api/links/nosuchcode', { key: alice.key })).status, 404);
  t.equal((await server.get(`/api/links/${code}`)).status, 401);
});

t.test('GET /api/links: the caller\'s links, newest first, paginated', async (t) => {
  const carol = await server.keygen('carol');
  const made: string[] = [];
  for (let i = 0; i < 5; i++) made.push(await create(server, carol, `https://example.com/carol/${i}`));
  await create(server, bob, 'https://example.com/not-carols');
  const first = await server.get('/api/links?limit=2', { key: carol.key });
  t.equal(first.status, 200);
  t.same(first.json.items.map((i: { short_code: string }) => i.short_code), [made[4], made[3]]);
  t.type(first.json.next_cursor, 'string');
  t.equal(first.json.items[0].url, 'https://example.com/carol/4');
  const second = await server.get(`/api/links?limit=2&cursor=${encodeURIComponent(first.json.next_cursor)}`, { key: carol.key });
  t.same(second.json.items.map((i: { short_code: string }) => i.short_code), [made[2], made[1]]);
  const third = await server.get(`/api/links?limit=2&cursor=${encodeURIComponent(second.json.next_cursor)}`, { key: carol.key });
  t.same(third.json.items.map((i: { short_code: string }) => i.short_code), [made[0]]);
  t.equal(third.json.next_cursor, null);
  const all = await server.get('/api/links', { key: carol.key });
  t.equal(all.json.items.length, 5);
  t.equal(all.json.next_cursor, null);
  const dave = await server.keygen('dave');
  t.same((await server.get('/api/links', { key: dave.key })).json, { items: [], next_cursor: null });

  for (const q of ['limit=0', 'limit=101', 'limit=abc', 'limit=-1', 'limit=1.5', 'cursor=bogus', 'cursor=MTIz.abcdefabcdef', 'cursor=', 'limit=0&cursor=']) {
    const r = await server.get(`/api/links?${q}`, { key: carol.key });
    t.equal(r.status, 400, q);
    t.equal(r.json.error, 'invalid_request');
  }
  // An empty cursor is 400 as on every other list, and both problems are named at once.
  const both = await server.get('/api/links?limit=0&cursor=', { key: carol.key });
  t.same(both.json.details.map((d: { path: string }) => d.path), ['limit', 'cursor']);
  t.equal((await server.get(`/api/users/${carol.user_id}/posts?cursor=`)).status, 400, 'the same rule as a user\'s posts');
  const stolen = await server.get(`/api/links?cursor=${encodeURIComponent(first.json.next_cursor)}`, { key: bob.key });
  t.equal(stolen.status, 400, 'a cursor of another user\'s list is not accepted');
  t.equal((await server.get('/api/links')).status, 401);
});

t.test('creation limits: 429 with the contract body, Retry-After and headers', async (t) => {
  const limited = await startServer({ threads: testThreads() });
  t.teardown(() => limited.close());
  const key = await limited.keygen('eve');
  // Sent together: the burst bucket gains a token every 200 ms, so six creations sent one after
  // another get a sixth token whenever the machine answers them slower than that.
  const responses = await Promise.all(Array.from({ length: 6 }, (_, i) => limited.post('/api/shorten', { key: key.key, json: { url: `https://example.com/${i}` } })));
  responses.forEach((r, i) => t.ok(hasLimitHeaders(r), `headers on response ${i + 1}`));
  t.same(responses.map((r) => r.status).sort(), [201, 201, 201, 201, 201, 429], 'the burst cap of 5 per second binds');
  const refused = responses.find((r) => r.status === 429)!;
  t.equal(refused.json.error, 'rate_limited');
  t.equal(refused.json.limit, 'shorten_burst', 'the body names the limit that was hit');
  t.type(refused.json.message, 'string');
  t.ok(Number.isInteger(refused.json.retry_after_seconds) && refused.json.retry_after_seconds >= 1);
  t.equal(refused.headers.get('retry-after'), String(refused.json.retry_after_seconds));
  t.equal(limitHeaders(refused).remaining, 0);
});
