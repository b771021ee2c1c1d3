// Aliases (custom codes) on POST /api/shorten, and POST /api/links/bulk: every rule of CONTRACT §2.
import t from 'tap';
import { startServer, testThreads, type Key, type TestServer } from '../helpers/server';
import { create, hasLimitHeaders, limitHeaders, shorten } from './links-helpers';

let server: TestServer;
let alice: Key;
let bob: Key;

t.before(async () => {
  server = await startServer({
    threads: testThreads(),
    config: {
      server: { public_origin: 'https://sho.rt' },
      anomaly: { max_links: 10000, max_same_domain: 10000 },
      // Eight creations per key and (almost) no refill: token counts change only by consumption.
      limits: { shorten: { capacity: 8, refill_per_second: 0.001, burst_per_second: 8, daily_quota: 1000 } },
    },
  });
  alice = await server.keygen('alice');
  bob = await server.keygen('bob');
});
t.teardown(() => server?.close());

t.test('an alias is the code: 201, Location, redirect and details under it; case matters', async (t) => {
  const r = await shorten(server, alice, { url: 'https://example.com/summer', alias: 'Summer_Sale-24' });
  t.equal(r.status, 201);
  t.match(r.json, { short_code: 'Summer_Sale-24', short_url: 'https://sho.rt/Summer_Sale-24', url: 'https://example.com/summer', password_protected: false });
  t.equal(r.headers.get('location'), '/api/links/Summer_Sale-24');
  t.ok(hasLimitHeaders(r));
  const go = await server.get('/Summer_Sale-24');
  t.equal(go.status, 302);
  t.equal(go.headers.get('location'), 'https://example.com/summer');
  t.equal((await server.get('/summer_sale-24')).status, 404, 'codes are case-sensitive');
  t.equal((await server.get('/api/links/Summer_Sale-24', { key: alice.key })).json.url, 'https://example.com/summer');
  t.equal((await shorten(server, alice, { url: 'https://example.com/other-case', alias: 'summer_sale-24' })).status, 201, 'another case is another code');
  t.equal((await server.get('/summer_sale-24')).headers.get('location'), 'https://example.com/other-case');
  const three = await shorten(server, alice, { url: 'https://example.com/3', alias: 'a-b' });
  t.equal(three.status, 201, 'three characters is enough');
  t.equal((await server.get('/a-b')).status, 302);
});

t.test('a taken alias is 409 and consumes nothing: live, expired, deleted, anybody\'s', async (t) => {
  const carol = await server.keygen('carol');
  await create(server, bob, 'https://bob.example/', { alias: 'bobs-link' });
  // An expiry far enough ahead that the creation is answered before it, on a starved machine too.
  const soon = new Date(Date.now() + 2000).toISOString();
  await create(server, bob, 'https://bob.example/old', { alias: 'expiring', expires_at: soon });
  const deleted = await create(server, bob, 'https://bob.example/gone', { alias: 'deleted-one' });
  t.equal((await server.request('DELETE', `/api/links/${deleted}`, { key: bob.key })).status, 204);
  await new Promise((r) => setTimeout(r, Date.parse(soon) - Date.now() + 100));
  t.equal((await server.get('/expiring')).status, 410);

  const before = limitHeaders(await shorten(server, carol, { url: 'https://carol.example/first' }));
  for (const alias of ['bobs-link', 'expiring', 'deleted-one']) {
    const r = await shorten(server, carol, { url: 'https://carol.example/', alias });
    t.equal(r.status, 409, alias);
    t.same(r.json, { error: 'conflict', message: 'This code is already in use; choose another alias.' });
    t.ok(hasLimitHeaders(r), 'with the limiter headers');
    t.equal(limitHeaders(r).remaining, before.remaining, 'nothing consumed');
  }
  t.equal((await server.get('/bobs-link')).headers.get('location'), 'https://bob.example/', 'the owner keeps it');
  t.equal((await server.get('/deleted-one')).status, 404, 'a deleted code stays deleted');
});

t.test('reserved and malformed aliases are 400 with details, consuming nothing', async (t) => {
  const dave = await server.keygen('dave');
  const before = limitHeaders(await shorten(server, dave, { url: 'https://dave.example/first' }));
  const cases: Array<[string, string]> = [
    ['api', '"api" is reserved'],
    ['API', '"API" is reserved'],
    ['Metrics', '"Metrics" is reserved'],
    ['healthz', '"healthz" is reserved'],
    ['media', '"media" is reserved'],
    ['export', '"export" is reserved'],
    ['Bulk', '"Bulk" is reserved'],
    ['ab', 'must be 3 to 64 characters'],
    ['x'.repeat(65), 'must be 3 to 64 characters'],
    ['has space', 'may contain only A-Z, a-z, 0-9, _ and -'],
    ['dot.ted', 'may contain only A-Z, a-z, 0-9, _ and -'],
    ['slash/ed', 'may contain only A-Z, a-z, 0-9, _ and -'],
    ['ümlaut', 'may contain only A-Z, a-z, 0-9, _ and -'],
  ];
  for (const [alias, message] of cases) {
    const r = await shorten(server, dave, { url: 'https://dave.example/', alias });
    t.equal(r.status, 400, alias);
    t.same(r.json.details, [{ path: 'alias', message }], alias);
    t.equal(limitHeaders(r).remaining, before.remaining, 'nothing consumed');
  }
  const wrongType = await shorten(server, dave, { url: 'https://dave.example/', alias: 42 });
  t.equal(wrongType.status, 400);
  t.equal(wrongType.json.details[0].path, 'alias');
  const both = await shorten(server, dave, { url: 'ftp://x', alias: 'api' });
  t.same(both.json.details.map((d: { path: string }) => d.path), ['url', 'alias'], 'every problem at once');
  t.equal((await server.get('/api/links/export', { key: dave.key })).status, 200, 'the route stays reachable');
});

t.test('an alias counts against the same limits', async (t) => {
  const erin = await server.keygen('erin');
  const first = await shorten(server, erin, { url: 'https://erin.example/', alias: 'erin-1' });
  const second = await shorten(server, erin, { url: 'https://erin.example/', alias: 'erin-2' });
  t.equal(limitHeaders(second).remaining, limitHeaders(first).remaining - 1);
  for (let i = 3; i <= 8; i++) t.equal((await shorten(server, erin, { url: 'https://erin.example/', alias: `erin-${i}` })).status, 201);
  const over = await shorten(server, erin, { url: 'https://erin.example/', alias: 'erin-9' });
  t.equal(over.status, 429);
  t.equal(over.json.error, 'rate_limited');
  t.equal((await server.get('/erin-9')).status, 404, 'nothing created');
  t.equal((await shorten(server, bob, { url: 'https://bob.example/', alias: 'erin-9' })).status, 201, 'the alias is still free');
});

t.test('bulk: partial success at the limit, each entry as its single creation would answer, in order', async (t) => {
  const frank = await server.keygen('frank');
  const ok = (n: number) => ({ url: `https://frank.example/${n}` });
  const links = [
    ok(0),
    { url: 'nope' },
    { url: 'https://frank.example/alias', alias: 'frank-a' },
    { url: 'https://frank.example/again', alias: 'frank-a' },
    { url: 'https://frank.example/', bogus: 1 },
    { url: 'https://frank.example/secret', password: 'open sesame' },
    ok(6),
    ok(7),
    ok(8),
    { url: 'https://frank.example/taken', alias: 'bobs-link' },
    ok(10),
    ok(11),
    ok(12),
    { url: 'https://frank.example/reserved', alias: 'api' },
    ok(14),
  ];
  const r = await server.post('/api/links/bulk', { key: frank.key, json: { links } });
  t.equal(r.status, 200);
  const items = r.json.items as Array<{ index: number; status: number; link?: Record<string, unknown>; error?: Record<string, unknown> }>;
  t.same(items.map((i) => i.index), links.map((_, i) => i), 'request order');
  t.same(items.map((i) => i.status), [201, 400, 201, 409, 400, 201, 201, 201, 201, 409, 201, 201, 429, 400, 429]);
  t.same(Object.keys(items[0]).sort(), ['index', 'link', 'status']);
  t.same(Object.keys(items[1]).sort(), ['error', 'index', 'status']);
  t.equal(items[0].link!.url, 'https://frank.example/0');
  t.match(items[0].link!.short_code, /^[0-9A-Za-z]{7}$/);
  t.same(items[2].link, { ...items[2].link, short_code: 'frank-a', short_url: 'https://sho.rt/frank-a', password_protected: false });
  t.equal(items[5].link!.password_protected, true);
  t.same(items[1].error, { error: 'invalid_request', message: 'url: must be an absolute http or https URL', details: [{ path: 'url', message: 'must be an absolute http or https URL' }] });
  t.same(items[3].error, { error: 'conflict', message: 'This code is already in use; choose another alias.' });
  t.same(items[4].error!.details, [{ path: 'bogus', message: 'unknown field "bogus"' }]);
  t.same(items[13].error!.details, [{ path: 'alias', message: '"api" is reserved' }]);
  t.equal(items[12].error!.error, 'rate_limited');
  t.type(items[12].error!.retry_after_seconds, 'number');
  t.ok((items[12].error!.retry_after_seconds as number) >= 1);
  t.equal(limitHeaders(r).remaining, 0, 'the headers as they stand after the batch');
  t.equal(limitHeaders(r).limit, 8);
  for (const i of [0, 2, 5, 6, 7, 8, 10, 11]) {
    const go = await server.get('/' + items[i].link!.short_code);
    t.equal(go.status, i === 5 ? 200 : 302, `entry ${i} was created`);
  }
  t.equal((await shorten(server, frank, ok(99))).status, 429, 'eight created, the bucket is empty');
  const list = await server.get('/api/links?limit=100', { key: frank.key });
  t.equal(list.json.items.length, 8, 'the 429 entries created nothing');
});

t.test('bulk: 1 to 100 entries, the envelope checked as a whole', async (t) => {
  const gina = await server.keygen('gina');
  const many = Array.from({ length: 101 }, (_, i) => ({ url: `https://gina.example/${i}` }));
  const cases: Array<[unknown, string]> = [
    [{ links: [] }, 'links'],
    [{ links: many }, 'links'],
    [{}, 'links'],
    [{ links: 'x' }, 'links'],
    [{ links: [{ url: 'https://gina.example/' }], extra: true }, 'extra'],
    [[{ url: 'https://gina.example/' }], ''],
  ];
  for (const [body, path] of cases) {
    const r = await server.post('/api/links/bulk', { key: gina.key, json: body });
    t.equal(r.status, 400, JSON.stringify(body).slice(0, 60));
    t.equal(r.json.details[0].path, path);
    t.ok(hasLimitHeaders(r));
  }
  t.equal((await server.post('/api/links/bulk', { json: { links: [{ url: 'https://gina.example/' }] } })).status, 401);
  const wrongType = await server.request('POST', '/api/links/bulk', { key: gina.key, body: '{}', headers: { 'content-type': 'text/plain' } });
  t.equal(wrongType.status, 415);
  t.equal((await server.get('/api/links/bulk', { key: gina.key })).status, 405);
  const hundred = await server.post('/api/links/bulk', { key: gina.key, json: { links: many.slice(0, 100) } });
  t.equal(hundred.status, 200);
  t.equal(hundred.json.items.filter((i: { status: number }) => i.status === 201).length, 8, 'a hundred entries are accepted; the limits decide');
});
