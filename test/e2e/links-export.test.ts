// GET /api/links/export: 10,000 links in CSV and in JSON, streamed, checked row by row against
// what their creation answered and what their details say; whose links an admin key may export.
import t from 'tap';
import { parseCsv } from '../../src/core/csv';
import { startServer, testThreads, type Key, type TestServer } from '../helpers/server';
import { BROWSER_UA, create, waitFor } from './links-helpers';

let server: TestServer;
let alice: Key;
let bob: Key;
let admin: Key;
/** Alice's links as their creation answered, oldest first. */
const created: Array<Record<string, unknown>> = [];
const COUNT = 10_000;

t.before(async () => {
  server = await startServer({
    threads: testThreads(),
    config: {
      server: { public_origin: 'https://sho.rt' },
      anomaly: { max_links: 100_000, max_same_domain: 100_000 },
      limits: { shorten: { capacity: 20_000, refill_per_second: 1, burst_per_second: 20_000, daily_quota: 20_000 } },
      links: { pool_target: 12_000, pool_low_water: 2500 },
    },
  });
  alice = await server.keygen('alice');
  bob = await server.keygen('bob');
  admin = await server.keygen('root', true);
  // One with a password, one with an expiry, then the rest in bulk, a hundred per request.
  for (const extra of [{ password: 'pass word' }, { expires_at: '2099-12-31T23:59:59.000Z' }]) {
    const r = await server.post('/api/shorten', { key: alice.key, json: { url: `https://example.com/special/${created.length}`, ...extra } });
    created.push(r.json);
  }
  for (let batch = 0; created.length < COUNT; batch++) {
    const links: Array<{ url: string }> = [];
    for (let i = 0; i < 100 && created.length + links.length < COUNT; i++) {
      const n: number = created.length + links.length;
      // Targets that need quoting in CSV, now and then.
      links.push({ url: n % 500 === 0 ? `https://example.com/q?a=1,b="2"&n=${n}` : `https://example.com/page/${n}` });
    }
    const r = await server.post('/api/links/bulk', { key: alice.key, json: { links } });
    for (const item of r.json.items) {
      if (item.status !== 201) throw new Error(`bulk creation failed: ${JSON.stringify(item)}`);
      created.push(item.link);
    }
  }
  await create(server, bob, 'https://bob.example/');
});
t.teardown(() => server?.close());

async function exportOf(query: string, key: Key) {
  const r = await fetch(`${server.url}/api/links/export${query}`, { headers: { authorization: `Bearer ${key.key}` } });
  return { status: r.status, headers: r.headers, text: await r.text() };
}

t.test('clicks first, so the export has counts to show', async (t) => {
  const clicked = created[5].short_code as string;
  for (let i = 0; i < 3; i++) t.equal((await server.get('/' + clicked, { headers: { 'user-agent': BROWSER_UA, referer: 'https://news.example/' } })).status, 302);
  t.equal((await server.get('/' + clicked, { headers: { 'user-agent': 'curl/8.5.0' } })).status, 302);
  await waitFor('the clicks', async () => {
    const r = await server.get(`/api/links/${clicked}`, { key: alice.key });
    return r.json.clicks.total === 3 && r.json.clicks.bots === 1 ? true : undefined;
  });
});

t.test('CSV: the contract header, then every link newest first, row by row', async (t) => {
  const r = await exportOf('?format=csv', alice);
  t.equal(r.status, 200);
  t.equal(r.headers.get('content-type'), 'text/csv; charset=utf-8');
  t.equal(r.headers.get('content-disposition'), 'attachment; filename="perch-links-alice.csv"');
  t.equal(r.headers.get('transfer-encoding'), 'chunked', 'streamed');
  t.ok(r.text.startsWith('short_code,short_url,url,created_at,expires_at,password_protected,clicks_total,clicks_bots\r\n'), 'the header, exactly');
  const twice = await exportOf('?format=csv&format=json', alice);
  t.equal(twice.headers.get('content-type'), 'text/csv; charset=utf-8', 'a parameter given twice counts with its first value, as everywhere');
  const rows = parseCsv(r.text).map((x) => x.fields);
  t.equal(rows.length, COUNT + 1);
  const expected = created.slice().reverse();
  let mismatches = 0;
  for (let i = 0; i < COUNT; i++) {
    const l = expected[i];
    const clicks = i === COUNT - 6 ? ['3', '1'] : ['0', '0'];
    const want = [l.short_code, l.short_url, l.url, l.created_at, l.expires_at ?? '', String(l.password_protected), ...clicks];
    if (JSON.stringify(rows[i + 1]) !== JSON.stringify(want)) {
      if (mismatches++ < 5) t.same(rows[i + 1], want, `row ${i + 1}`);
    }
  }
  t.equal(mismatches, 0, 'every row as its link was created');
  t.same(rows[COUNT], [created[0].short_code, created[0].short_url, 'https://example.com/special/0', created[0].created_at, '', 'true', '0', '0'], 'the password link');
  t.equal(rows[COUNT - 1][4], '2099-12-31T23:59:59.000Z', 'the expiry');
  t.ok(r.text.includes('"https://example.com/q?a=1,b=""2""&n=500"'), 'a target with a comma and quotes is quoted');
  t.notOk(r.text.includes('bob.example'), "only the caller's links");
  t.same(parseCsv((await exportOf('', alice)).text)[0].fields[0], 'short_code', 'CSV is the default');
});

t.test('JSON: an array of the details objects without daily, matching the details', async (t) => {
  const r = await exportOf('?format=json', alice);
  t.equal(r.status, 200);
  t.equal(r.headers.get('content-type'), 'application/json');
  t.equal(r.headers.get('transfer-encoding'), 'chunked');
  const items = JSON.parse(r.text) as Array<Record<string, any>>;
  t.equal(items.length, COUNT);
  const expected = created.slice().reverse();
  let mismatches = 0;
  for (let i = 0; i < COUNT; i++) {
    const l = expected[i];
    const it = items[i];
    const same = it.short_code === l.short_code && it.short_url === l.short_url && it.url === l.url && it.created_at === l.created_at &&
      it.expires_at === l.expires_at && it.password_protected === l.password_protected && it.status === 'active' && !('daily' in it.clicks);
    if (!same && mismatches++ < 5) t.same(it, l, `item ${i}`);
  }
  t.equal(mismatches, 0, 'every item as its link was created');
  for (const code of [created[5].short_code, created[0].short_code, created[1].short_code]) {
    const details = (await server.get(`/api/links/${code}`, { key: alice.key })).json;
    delete details.clicks.daily;
    t.same(items.find((x) => x.short_code === code), details, `${code} as its details say, without daily`);
  }
  t.match(items[COUNT - 6].clicks, { total: 3, bots: 1, last_24h: 3, referrers: [{ referrer: 'news.example', count: 3 }], browsers: [{ name: 'Firefox', count: 3 }], os: [{ name: 'Linux', count: 3 }] });
});

t.test('whose links: an admin key may name a user; others may not; bad format is 400', async (t) => {
  const viaAdmin = await exportOf('?format=csv&user=alice', admin);
  t.equal(viaAdmin.status, 200);
  t.equal(viaAdmin.headers.get('content-disposition'), 'attachment; filename="perch-links-alice.csv"');
  t.equal(parseCsv(viaAdmin.text).length, COUNT + 1);
  const byAt = await exportOf(`?format=json&user=@bob`, admin);
  t.same(JSON.parse(byAt.text).map((x: { url: string }) => x.url), ['https://bob.example/']);
  const own = await exportOf('?user=bob', bob);
  t.equal(own.status, 200, 'naming oneself is fine');
  const other = await server.get('/api/links/export?user=alice', { key: bob.key });
  t.equal(other.status, 403);
  t.equal(other.json.error, 'forbidden');
  const nobody = await server.get('/api/links/export?user=nobody', { key: admin.key });
  t.equal(nobody.status, 404);
  const bad = await server.get('/api/links/export?format=xml', { key: alice.key });
  t.equal(bad.status, 400);
  t.same(bad.json.details, [{ path: 'format', message: 'must be csv or json' }]);
  t.equal((await server.get('/api/links/export')).status, 401);
  const empty = await exportOf('?format=json', admin);
  t.equal(empty.text, '[]', "the admin's own links: none");
  const head = await server.request('HEAD', '/api/links/export?format=csv', { key: bob.key });
  t.equal(head.status, 200);
  t.equal(head.text, '');
});

t.test("HEAD: the GET's headers without its body; no length, which only writing the export would tell", async (t) => {
  const headers = (h: Headers) => Object.fromEntries([...h].filter(([name]) => name !== 'date'));
  const cases: Array<[string, Key]> = [['?format=csv', alice], ['?format=json', alice], ['', bob], ['?format=json&user=alice', admin]];
  for (const [query, key] of cases) {
    const get = await exportOf(query, key);
    const head = await fetch(`${server.url}/api/links/export${query}`, { method: 'HEAD', headers: { authorization: `Bearer ${key.key}` } });
    t.equal(head.status, 200, query);
    t.equal(await head.text(), '', `${query}: no body`);
    const { 'transfer-encoding': framing, ...getHeaders } = headers(get.headers);
    t.equal(framing, 'chunked', `${query}: the GET is streamed`);
    t.same(headers(head.headers), getHeaders, `${query}: the same headers but the body's framing`);
    t.equal(head.headers.get('content-length'), null, `${query}: no Content-Length`);
    t.match(head.headers.get('content-disposition'), /^attachment; filename="perch-links-(alice|bob)\.(csv|json)"$/);
  }
  // Errors are whole answers: a HEAD of one has the length of the GET's body.
  for (const [query, key, status] of [['?format=xml', alice, 400], ['?user=alice', bob, 403], ['?user=nobody', admin, 404]] as const) {
    const get = await exportOf(query, key);
    const head = await fetch(`${server.url}/api/links/export${query}`, { method: 'HEAD', headers: { authorization: `Bearer ${key.key}` } });
    t.equal(head.status, status, query);
    t.equal(get.status, status, query);
    t.same(headers(head.headers), headers(get.headers), `${query}: the same headers`);
    t.equal(head.headers.get('content-length'), String(Buffer.byteLength(get.text)), `${query}: the length of the GET's body`);
  }
});
