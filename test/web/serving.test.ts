// The web client's files over plain HTTP: caching, validators, content codings, the page's
// Content-Security-Policy, the size budget, and web.enabled.
import t from 'tap';
import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { startServer, ROOT, type TestServer } from '../helpers/server';
import type { WebManifest } from '../../src/web/manifest';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A request whose body is left as sent (fetch would undo the content coding). */
function raw(server: TestServer, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(server.url + path, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const WEB_DIR = join(ROOT, 'dist', 'web');
const manifest = JSON.parse(readFileSync(join(WEB_DIR, 'manifest.json'), 'utf8')) as WebManifest;
const page = manifest.files.find((f) => f.url === '/')!;
const entry = manifest.files.find((f) => f.first_screen && f.url.startsWith('/app/app-') && f.url.endsWith('.js'))!;
const built = (url: string) => readFileSync(join(WEB_DIR, manifest.files.find((f) => f.url === url)!.path));
/** Every optional screen's feature: this server has every capability. */
const ALL_FEATURES = 'notifications search replies link-extras';
/** What the server sends for a file: as built, but the page with its feature list filled in. */
const identity = (url: string) =>
  url === '/' ? Buffer.from(built('/').toString('utf8').replace('<meta name="perch-features" content="">', `<meta name="perch-features" content="${ALL_FEATURES}">`)) : built(url);

let server: TestServer;
t.before(async () => {
  server = await startServer({ config: { server: { public_origin: 'https://perch.example' } } });
});
t.teardown(() => server.close());

t.test('the build: hashed names, a page naming them, and the first screen under its budget', async (t) => {
  t.ok(page, 'the manifest has the page');
  t.ok(entry, 'and the entry script');
  t.equal(manifest.budget_gzip_bytes, 100 * 1024);
  const firstScreen = manifest.files.filter((f) => f.first_screen);
  t.equal(manifest.first_screen_js_gzip_bytes, firstScreen.reduce((n, f) => n + f.gzip_bytes, 0), 'the figure is the sum of its files');
  t.ok(manifest.first_screen_js_gzip_bytes > 5 * 1024, 'it counts real code');
  t.ok(manifest.first_screen_js_gzip_bytes < manifest.budget_gzip_bytes, `first screen ${manifest.first_screen_js_gzip_bytes} B gzipped, under 100 KB`);
  for (const f of manifest.files) {
    if (f.url === '/') continue;
    t.equal(readFileSync(join(WEB_DIR, f.path)).length, f.bytes);
    if (f.service_worker) continue;
    t.match(f.url, /^\/app\/[a-z]+-[A-Za-z0-9]{8}\.(js|css|svg)$/, `${f.url} is a hashed name`);
    t.equal(f.immutable, true);
    t.equal(readFileSync(join(WEB_DIR, f.path + '.gz')).length, f.gzip_bytes);
    t.equal(readFileSync(join(WEB_DIR, f.path + '.br')).length, f.br_bytes);
  }
  const html = readFileSync(join(WEB_DIR, page.path), 'utf8');
  t.ok(html.includes(`<script type="module" src="${entry.url}"></script>`), 'the page loads the entry script');
  t.ok(manifest.files.some((f) => f.url.endsWith('.js') && !f.first_screen), 'the chart library is a chunk of its own, not on the first screen');
});

t.test('GET / is the page: revalidated, with a strict policy and no inline script or style', async (t) => {
  const r = await raw(server, '/');
  t.equal(r.status, 200);
  t.equal(r.headers['content-type'], 'text/html; charset=utf-8');
  t.equal(r.headers['cache-control'], 'no-cache');
  t.equal(r.headers['x-content-type-options'], 'nosniff');
  t.equal(r.headers['content-encoding'], undefined, 'no coding asked, none sent');
  t.equal(r.headers.vary, 'Accept-Encoding');
  const csp = String(r.headers['content-security-policy']);
  const directives = new Map(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name, values.join(' ')]));
  t.equal(directives.get('default-src'), "'self'");
  t.equal(directives.get('script-src'), "'self'", 'no inline or eval');
  t.equal(directives.get('style-src'), "'self'");
  t.equal(directives.get('img-src'), "'self' data: blob:");
  t.equal(directives.get('connect-src'), "'self' ws://perch.example wss://perch.example", 'WebSockets of the public origin');
  t.equal(directives.get('frame-ancestors'), "'none'");
  t.equal(directives.get('base-uri'), "'none'");
  t.equal(directives.get('form-action'), "'self'");
  t.notOk(csp.includes('unsafe'), 'nothing unsafe');
  const html = r.body.toString('utf8');
  t.same(r.body, identity('/'));
  const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
  t.ok(scripts.length >= 1);
  for (const [, attrs, content] of scripts) {
    t.match(attrs, /\ssrc="\/app\//, 'every script is a file of /app/');
    t.equal(content.trim(), '', 'and has no inline code');
  }
  t.notMatch(html, /<style\b/i, 'no style element');
  t.notMatch(html, /\sstyle=/i, 'no style attribute');
  t.notMatch(html, /\son[a-z]+=/i, 'no inline event handler');
  t.notMatch(html, /https?:\/\//, 'nothing from elsewhere');
});

t.test("the page lists the client's optional screens this server can serve, and the build leaves the list empty", async (t) => {
  t.match(built('/').toString('utf8'), /<meta name="perch-features" content="">/, 'the build: an empty list');
  const r = await raw(server, '/', { 'accept-encoding': 'br' });
  const html = brotliDecompressSync(r.body).toString('utf8');
  t.equal(html.match(/<meta name="perch-features" content="([^"]*)">/)?.[1], ALL_FEATURES, 'served: every feature');
  t.equal(html.match(/perch-features/g)?.length, 1, 'one list');
  t.not(String(r.headers.etag).slice(1, 25), page.sha256.slice(0, 24), "the served page's tag is its own, not the build's");
});

t.test('hashed files are immutable; every answer has an ETag and revalidates to 304', async (t) => {
  const r = await raw(server, entry.url);
  t.equal(r.status, 200);
  t.equal(r.headers['content-type'], 'text/javascript; charset=utf-8');
  t.equal(r.headers['cache-control'], 'public, max-age=31536000, immutable');
  t.equal(r.headers['x-content-type-options'], 'nosniff');
  t.equal(r.headers['content-security-policy'], undefined, 'the policy belongs to the page');
  t.same(r.body, identity(entry.url));
  const etag = String(r.headers.etag);
  t.match(etag, /^"[0-9a-f]{24}"$/);
  const again = await raw(server, entry.url, { 'if-none-match': etag });
  t.equal(again.status, 304);
  t.equal(again.body.length, 0);
  t.equal(again.headers.etag, etag);
  t.equal(again.headers['cache-control'], 'public, max-age=31536000, immutable');
  t.equal(again.headers.vary, 'Accept-Encoding');
  t.equal((await raw(server, entry.url, { 'if-none-match': `W/${etag}` })).status, 304, 'weak comparison');
  t.equal((await raw(server, entry.url, { 'if-none-match': '"other"' })).status, 200, 'another tag gets the file');

  const p = await raw(server, '/');
  const revalidated = await raw(server, '/', { 'if-none-match': String(p.headers.etag) });
  t.equal(revalidated.status, 304, 'the page revalidates too');
  t.equal(revalidated.headers['cache-control'], 'no-cache');
});

t.test('brotli or gzip as Accept-Encoding asks, each its own representation', async (t) => {
  for (const url of ['/', entry.url]) {
    const plain = identity(url);
    const br = await raw(server, url, { 'accept-encoding': 'gzip, deflate, br' });
    t.equal(br.headers['content-encoding'], 'br', `${url}: brotli preferred`);
    t.equal(br.headers.vary, 'Accept-Encoding');
    t.same(brotliDecompressSync(br.body), plain, 'decodes to the file');
    t.ok(br.body.length < plain.length, 'and is smaller');
    const gz = await raw(server, url, { 'accept-encoding': 'gzip' });
    t.equal(gz.headers['content-encoding'], 'gzip');
    t.same(gunzipSync(gz.body), plain);
    t.not(gz.headers.etag, br.headers.etag, 'each coding has its own tag');
    t.equal((await raw(server, url, { 'accept-encoding': 'gzip', 'if-none-match': String(gz.headers.etag) })).status, 304);
    t.equal((await raw(server, url, { 'accept-encoding': 'br', 'if-none-match': String(gz.headers.etag) })).status, 200, "gzip's tag does not validate the brotli form");
    const none = await raw(server, url, { 'accept-encoding': 'br;q=0, gzip;q=0' });
    t.equal(none.headers['content-encoding'], undefined);
    t.same(none.body, plain);
  }
});

t.test('HEAD, unknown files and other methods', async (t) => {
  const head = await raw(server, entry.url, { 'accept-encoding': 'br' }, 'HEAD');
  t.equal(head.status, 200);
  t.equal(head.headers['content-length'], String(entry.br_bytes), 'the length of what a GET would send');
  t.equal(head.body.length, 0);
  const missing = await server.get('/app/app-00000000.js');
  t.equal(missing.status, 404);
  t.equal(missing.json.error, 'not_found');
  t.equal((await server.get('/app/manifest.json')).status, 404, 'the manifest is not served');
  t.equal((await server.get('/index.html')).status, 404, 'the page is only at /');
  const post = await server.post('/');
  t.equal(post.status, 405);
  t.equal(post.headers.get('allow'), 'GET, HEAD');
});

t.test('the service worker: a fixed name, revalidated, allowed to cover the whole origin', async (t) => {
  const sw = manifest.files.filter((f) => f.service_worker);
  t.equal(sw.length, 1, 'one service worker');
  t.equal(sw[0].url, '/app/sw.js', 'under a name that does not change between builds');
  t.equal(sw[0].immutable, false);
  t.equal(sw[0].first_screen, false, 'not part of the first screen: loaded only when push is turned on');
  const r = await raw(server, '/app/sw.js', { 'accept-encoding': 'gzip' });
  t.equal(r.status, 200);
  t.equal(r.headers['content-type'], 'text/javascript; charset=utf-8');
  t.equal(r.headers['cache-control'], 'no-cache', 'a browser checks it for a new version');
  t.equal(r.headers['service-worker-allowed'], '/', 'its scope may be the page at /');
  t.equal(r.headers['content-security-policy'], (await raw(server, '/')).headers['content-security-policy'], "the page's policy governs the worker too");
  t.same(gunzipSync(r.body), identity('/app/sw.js'));
  const text = identity('/app/sw.js').toString('utf8');
  t.match(text, /addEventListener\("push"/, 'it handles push messages');
  t.notMatch(text, /addEventListener\("fetch"/, 'and never stands between the browser and the server');
  t.equal((await raw(server, entry.url)).headers['service-worker-allowed'], undefined, 'only the worker carries the header');
});

t.test('web.enabled: false answers 404 for the page and its files', async (t) => {
  const off = await startServer({ config: { web: { enabled: false } } });
  t.teardown(() => off.close());
  const p = await off.get('/');
  t.equal(p.status, 404);
  t.equal(p.headers.get('content-security-policy'), null);
  const f = await off.get(entry.url);
  t.equal(f.status, 404);
  t.equal(f.json.error, 'not_found');
  t.equal((await off.get('/healthz')).status, 200, 'the API serves on');
});
