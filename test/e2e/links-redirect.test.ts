// GET and HEAD /{code}: 302, expiry → 410, unknown/deleted → 404 (HTML or JSON), PATCH/DELETE,
// and the loose per-IP limit with its headers on every response.
import t from 'tap';
import { get as httpGet, type IncomingHttpHeaders } from 'node:http';
import { startServer, testThreads, type Key, type TestServer } from '../helpers/server';
import { BROWSER_UA, create, hasLimitHeaders, shorten, waitFor } from './links-helpers';

let server: TestServer;
let alice: Key;
let bob: Key;
let admin: Key;

t.before(async () => {
  server = await startServer({
    threads: testThreads(),
    config: { limits: { shorten: { capacity: 200, refill_per_second: 100, burst_per_second: 200, daily_quota: 1000 } } },
  });
  alice = await server.keygen('alice');
  bob = await server.keygen('bob');
  admin = await server.keygen('root', true);
});
t.teardown(() => server?.close());

t.test('an active link answers 302 with Location, no-store and limiter headers; HEAD too', async (t) => {
  const code = await create(server, alice, 'https://example.com/target?x=1');
  const r = await server.get('/' + code);
  t.equal(r.status, 302);
  t.equal(r.headers.get('location'), 'https://example.com/target?x=1');
  t.equal(r.headers.get('cache-control'), 'private, no-store');
  t.ok(hasLimitHeaders(r));
  t.equal(r.headers.get('content-length'), '0');
  const h = await server.request('HEAD', '/' + code);
  t.equal(h.status, 302);
  t.equal(h.headers.get('content-length'), '0', 'HEAD has the length a GET has');
  t.equal(h.headers.get('location'), 'https://example.com/target?x=1');
  t.equal(h.headers.get('cache-control'), 'private, no-store');
  t.ok(hasLimitHeaders(h));
  const again = await server.get('/' + code);
  t.equal(again.status, 302, 'a cached entry answers the same');
  t.equal(again.headers.get('location'), 'https://example.com/target?x=1');
});

t.test('unknown codes and reserved paths: 404, HTML by default, JSON when asked', async (t) => {
  const html = await server.get('/Zz9Zz9Q');
  t.equal(html.status, 404);
  t.match(html.headers.get('content-type'), /text\/html/);
  t.match(html.text, /not found/i);
  t.ok(hasLimitHeaders(html));
  const json = await server.get('/Zz9Zz9Q', { headers: { accept: 'application/json' } });
  t.equal(json.status, 404);
  t.equal(json.json.error, 'not_found');
  t.type(json.json.message, 'string');
  t.ok(hasLimitHeaders(json));
  // The media type in any case; a quality of 0, or text/html rated above it, asks for the page.
  t.equal((await server.get('/Zz9Zz9Q', { headers: { accept: 'APPLICATION/JSON' } })).json.error, 'not_found', 'Accept in capitals');
  for (const accept of ['text/html, application/json;q=0', 'text/html, application/json;q=0.5', 'text/html,application/xhtml+xml,*/*;q=0.8']) {
    t.match((await server.get('/Zz9Zz9Q', { headers: { accept } })).headers.get('content-type'), /text\/html/, `the page for ${accept}`);
  }
  for (const p of ['/x', '/bad%20code', '/API', '/%61pi']) {
    const r = await server.get(p);
    t.equal(r.status, 404, p);
    t.match(r.text, /not found/i, `${p}: an unknown link`);
    t.ok(hasLimitHeaders(r), `${p}: as a short code`);
  }
  const head = await server.request('HEAD', '/Zz9Zz9Q');
  t.equal(head.status, 404);
  t.equal(head.headers.get('content-length'), String(Buffer.byteLength(html.text)), 'HEAD has the length of the GET body');
  t.equal(head.text, '', 'and no body');
  const headJson = await server.request('HEAD', '/Zz9Zz9Q', { headers: { accept: 'application/json' } });
  t.equal(headJson.headers.get('content-length'), String(Buffer.byteLength(json.text)));
  t.equal((await server.get('/healthz')).status, 200, 'fixed routes still win over codes');
  const post = await server.post('/Zz9Zz9Q');
  t.equal(post.status, 404, 'POST /{code} (password links) of an unknown code');
  const put = await server.request('PUT', '/Zz9Zz9Q');
  t.equal(put.status, 405);
  t.equal(put.headers.get('allow'), 'GET, HEAD, POST');
});

t.test('a percent-encoded code is the code it encodes, as in the API; a broken encoding names no link', async (t) => {
  const code = await create(server, alice, 'https://example.com/encoded', { alias: 'enc-Alias_1' });
  const encoded = ['/%65nc-Alias_1', '/enc%2DAlias%5F1', '/%65%6E%63%2D%41%6C%69%61%73%5F%31', '/enc%2dAlias%5f1'];
  for (const path of encoded) {
    const r = await server.get(path, { headers: { 'user-agent': BROWSER_UA } });
    t.equal(r.status, 302, path);
    t.equal(r.headers.get('location'), 'https://example.com/encoded', path);
    t.ok(hasLimitHeaders(r), `${path}: limiter headers`);
    const api = await server.get(`/api/links${path}`, { key: alice.key });
    t.equal(api.json.short_code, code, `${path}: the API names the same link`);
  }
  const head = await server.request('HEAD', encoded[0]);
  t.equal(head.status, 302);
  t.equal(head.headers.get('location'), 'https://example.com/encoded');
  // Each GET above was a click of the decoded code (the HEAD a bot), counted under that code.
  const details = await waitFor('the clicks of the encoded requests', async () => {
    const r = await server.get(`/api/links/${code}`, { key: alice.key });
    return r.json.clicks.total === encoded.length && r.json.clicks.bots === 1 ? r.json : undefined;
  });
  t.equal(details.clicks.total, encoded.length);

  // Invalid encodings and encoded characters no code has: the 404 of an unknown code, as in the API.
  for (const path of ['/%zz', '/enc-Alias_1%', '/enc-Alias_1%2', '/%E0%A4%A', '/%FF%FE%FD', '/enc%2FAlias_1', '/enc%20Alias_1']) {
    const html = await server.get(path);
    t.equal(html.status, 404, path);
    t.match(html.headers.get('content-type'), /text\/html/, `${path}: the HTML page`);
    t.match(html.headers.get('content-security-policy'), /^default-src 'none';.*frame-ancestors 'none'/, `${path}: a page that runs nothing and is not framed`);
    t.ok(hasLimitHeaders(html), `${path}: limiter headers`);
    const json = await server.get(path, { headers: { accept: 'application/json' } });
    t.equal(json.json?.error, 'not_found', `${path}: JSON when asked`);
    t.equal((await server.get(`/api/links${path}`, { key: alice.key })).status, 404, `${path}: 404 in the API too`);
  }
  const after = await server.get(`/api/links/${code}`, { key: alice.key });
  t.equal(after.json.clicks.total + after.json.clicks.bots, encoded.length + 1, 'the refused paths counted nothing');
});

t.test('reserved root paths without a route are no links: every method answers 404 "No such endpoint."', async (t) => {
  const noEndpoint = { error: 'not_found', message: 'No such endpoint.' };
  for (const p of ['/api', '/app', '/assets', '/media', '/favicon.ico', '/robots.txt']) {
    const get = await server.get(p);
    t.equal(get.status, 404, p);
    t.same(get.json, noEndpoint, `${p}: the answer of a path no route matches`);
    t.equal(get.headers.get('x-ratelimit-limit'), null, `${p}: not counted against the redirect limit`);
    t.same((await server.get(p + '/')).json, noEndpoint, `${p}/ answers alike`);
    const head = await server.request('HEAD', p);
    t.equal(head.status, 404, `HEAD ${p}`);
    t.equal(head.headers.get('content-length'), String(Buffer.byteLength(get.text)), `HEAD ${p}: the length of the GET's body`);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const r = await server.request(method, p, { key: alice.key, json: { password: 'x' } });
      t.equal(r.status, 404, `${method} ${p}: no method is allowed where nothing is`);
      t.same(r.json, noEndpoint, `${method} ${p}`);
      t.equal(r.headers.get('allow'), null, `${method} ${p}: no Allow`);
    }
  }
  for (const p of ['/healthz', '/readyz', '/metrics']) {
    t.equal((await server.get(p)).status, 200, p);
    const put = await server.request('PUT', p);
    t.equal(put.status, 405, `PUT ${p}`);
    t.equal(put.headers.get('allow'), 'GET, HEAD', `PUT ${p}: its own methods`);
  }
});

t.test('expiry turns 302 into 410 (HTML page or JSON)', async (t) => {
  const expires = new Date(Date.now() + 1500).toISOString();
  const code = await create(server, alice, 'https://example.com/soon-gone', { expires_at: expires });
  t.equal((await server.get('/' + code)).status, 302, 'active before expiry');
  await new Promise((r) => setTimeout(r, Date.parse(expires) - Date.now() + 100));
  const html = await server.get('/' + code);
  t.equal(html.status, 410);
  t.match(html.headers.get('content-type'), /text\/html/);
  t.match(html.text, /expired/i);
  t.equal(html.headers.get('location'), null);
  t.ok(hasLimitHeaders(html));
  const json = await server.get('/' + code, { headers: { accept: 'application/json, text/plain' } });
  t.equal(json.status, 410);
  t.same(Object.keys(json.json).sort(), ['error', 'message']);
  t.equal(json.json.error, 'gone');
  t.equal((await server.request('HEAD', '/' + code)).status, 410);
  const details = await server.get(`/api/links/${code}`, { key: alice.key });
  t.equal(details.json.status, 'expired');
  t.equal(details.json.expires_at, expires);
});

t.test('PATCH changes the target and expiry; redirects follow at once', async (t) => {
  const code = await create(server, alice, 'https://example.com/old');
  t.equal((await server.get('/' + code)).headers.get('location'), 'https://example.com/old');
  const r = await server.request('PATCH', `/api/links/${code}`, { key: alice.key, json: { url: 'https://example.com/new' } });
  t.equal(r.status, 200);
  t.equal(r.json.url, 'https://example.com/new');
  t.equal(r.json.short_code, code);
  t.ok(r.json.clicks, 'answers the details object');
  t.ok(Date.parse(r.json.updated_at) >= Date.parse(r.json.created_at));
  t.equal((await server.get('/' + code)).headers.get('location'), 'https://example.com/new');

  const later = new Date(Date.now() + 86_400_000).toISOString();
  const withExpiry = await server.request('PATCH', `/api/links/${code}`, { key: alice.key, json: { expires_at: later } });
  t.equal(withExpiry.json.expires_at, later);
  t.equal(withExpiry.json.url, 'https://example.com/new', 'fields not sent are kept');
  const cleared = await server.request('PATCH', `/api/links/${code}`, { key: admin.key, json: { expires_at: null } });
  t.equal(cleared.status, 200, 'an admin may edit');
  t.equal(cleared.json.expires_at, null);

  for (const body of [{ url: 'ftp://x.example' }, { expires_at: '2001-01-01T00:00:00Z' }, { url: 'https://example.com', colour: 1 }]) {
    const bad = await server.request('PATCH', `/api/links/${code}`, { key: alice.key, json: body });
    t.equal(bad.status, 400, JSON.stringify(body));
    t.equal(bad.json.error, 'invalid_request');
  }
  const other = await server.request('PATCH', `/api/links/${code}`, { key: bob.key, json: { url: 'https://bob.example' } });
  t.equal(other.status, 404, 'another user cannot tell the link exists');
  t.equal((await server.get('/' + code)).headers.get('location'), 'https://example.com/new');
  t.equal((await server.request('PATCH', '/api/links/NoSuch12', { key: alice.key, json: { url: 'https://example.com' } })).status, 404);
});

t.test('PATCH can revive an expired link', async (t) => {
  // An expiry far enough ahead that the creation is answered before it, on a starved machine too.
  const expires = new Date(Date.now() + 2000).toISOString();
  const code = await create(server, alice, 'https://example.com/revive', { expires_at: expires });
  await new Promise((r) => setTimeout(r, Date.parse(expires) - Date.now() + 100));
  t.equal((await server.get('/' + code)).status, 410);
  const r = await server.request('PATCH', `/api/links/${code}`, { key: alice.key, json: { expires_at: null } });
  t.equal(r.json.status, 'active');
  t.equal((await server.get('/' + code)).status, 302);
});

t.test('DELETE → 204; afterwards the code answers 404 everywhere', async (t) => {
  const code = await create(server, alice, 'https://example.com/doomed');
  t.equal((await server.get('/' + code)).status, 302);
  t.equal((await server.request('DELETE', `/api/links/${code}`, { key: bob.key })).status, 404, 'not the owner');
  t.equal((await server.get('/' + code)).status, 302);
  const del = await server.request('DELETE', `/api/links/${code}`, { key: alice.key });
  t.equal(del.status, 204);
  t.equal(del.text, '');
  t.equal((await server.get('/' + code)).status, 404);
  t.equal((await server.get('/' + code, { headers: { accept: 'application/json' } })).json.error, 'not_found');
  t.equal((await server.get(`/api/links/${code}`, { key: alice.key })).status, 404);
  t.equal((await server.request('DELETE', `/api/links/${code}`, { key: alice.key })).status, 404, 'deleting twice');
  const list = await server.get('/api/links?limit=100', { key: alice.key });
  t.notOk(list.json.items.some((i: { short_code: string }) => i.short_code === code));
  const byAdmin = await create(server, bob, 'https://example.com/admin-deletes');
  t.equal((await server.request('DELETE', `/api/links/${byAdmin}`, { key: admin.key })).status, 204);
  t.equal((await server.get('/' + byAdmin)).status, 404);
});

/** GET over a connection of its own (the kernel spreads new connections over the HTTP threads). */
function freshGet(url: string): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpGet(url, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
  });
}

t.test('the loose per-IP redirect limit: the configured bucket whatever the thread, headers always, 429 with the contract body', async (t) => {
  const limited = await startServer({
    threads: testThreads(),
    config: { limits: { redirect: { capacity: 8, refill_per_second: 0.01 } } },
  });
  t.teardown(() => limited.close());
  const key = await limited.keygen('frank');
  const code = (await shorten(limited, key, { url: 'https://example.com/popular' })).json.short_code;
  const statuses: number[] = [];
  let rejected: { status: number; headers: IncomingHttpHeaders; body: string } | undefined;
  for (let i = 0; i < 12; i++) {
    const r = await freshGet(`${limited.url}/${code}`);
    statuses.push(r.status);
    t.equal(r.headers['x-ratelimit-limit'], '8', `the configured capacity on response ${i + 1} (${r.status})`);
    t.match(r.headers['x-ratelimit-remaining'], /^\d+$/);
    t.match(r.headers['x-ratelimit-reset'], /^\d+$/);
    if (r.status === 429) rejected ??= r;
  }
  t.same(statuses, [...Array(8).fill(302), ...Array(4).fill(429)], 'exactly the 8 of the bucket pass, over connections spread across threads');
  const body = JSON.parse(rejected!.body);
  t.equal(body.error, 'rate_limited');
  t.equal(body.limit, 'redirect');
  t.type(body.message, 'string');
  t.ok(body.retry_after_seconds >= 1);
  t.equal(rejected!.headers['retry-after'], String(body.retry_after_seconds));
  t.equal(rejected!.headers['x-ratelimit-remaining'], '0');
  const metrics = (await limited.get('/metrics')).text;
  t.match(metrics, /^perch_rate_limit_rejections_total\{limit="redirect"\} 4$/m, 'every 429 counted as a rejection');
  const shortenStill = await shorten(limited, key, { url: 'https://example.com/other' });
  t.equal(shortenStill.status, 201, 'the redirect limit does not touch creation');
});
