import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { contentSecurityPolicy, loadWebAssets, withBody } from '../../src/web/assets';
import { FEATURES_ELEMENT, featureList, pageWithFeatures } from '../../src/web/features';
import type { WebManifest } from '../../src/web/manifest';

t.test('no build: nothing to serve', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'perch-web-empty-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  t.equal(loadWebAssets(dir, {}), undefined);
});

t.test('a build is read with its headers precomputed per coding', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'perch-web-build-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'app'));
  const put = (path: string, text: string) => {
    writeFileSync(join(dir, path), text);
    writeFileSync(join(dir, path + '.gz'), 'gz:' + text);
    writeFileSync(join(dir, path + '.br'), 'br:' + text);
  };
  put('index.html', '<!doctype html>');
  put('app/app-AAAAAAAA.js', 'export {}');
  put('app/sw.js', 'self.addEventListener("push", () => {})');
  const file = (path: string, url: string, immutable: boolean, sha256: string) => ({
    path, url, content_type: 'x/y', immutable, sha256, bytes: 1, gzip_bytes: 1, br_bytes: 1, first_screen: false,
  });
  const manifest: WebManifest = {
    version: 1,
    files: [
      file('index.html', '/', false, 'a'.repeat(64)),
      file('app/app-AAAAAAAA.js', '/app/app-AAAAAAAA.js', true, 'b'.repeat(64)),
      { ...file('app/sw.js', '/app/sw.js', false, 'c'.repeat(64)), service_worker: true },
    ],
    first_screen_js_gzip_bytes: 0,
    budget_gzip_bytes: 102400,
  };
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));

  const assets = loadWebAssets(dir, { 'Content-Security-Policy': "default-src 'self'" })!;
  t.same([...assets.files.keys()], ['app-AAAAAAAA.js', 'sw.js']);
  const page = assets.page.variants;
  t.equal(page.identity.body.toString(), '<!doctype html>');
  t.equal(page.br.body.toString(), 'br:<!doctype html>');
  t.same(page.gzip.headers, {
    'Cache-Control': 'no-cache',
    ETag: `"${'a'.repeat(24)}-gzip"`,
    Vary: 'Accept-Encoding',
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "default-src 'self'",
    'Content-Encoding': 'gzip',
  });
  t.equal(page.gzip.notModifiedHeaders['Content-Encoding'], undefined, 'a 304 describes no body');
  const script = assets.files.get('app-AAAAAAAA.js')!.variants;
  t.same(script.identity.headers, {
    'Cache-Control': 'public, max-age=31536000, immutable',
    ETag: `"${'b'.repeat(24)}"`,
    Vary: 'Accept-Encoding',
    'X-Content-Type-Options': 'nosniff',
  }, 'no policy on files, no coding on the plain form');
  t.equal(script.br.etag, `"${'b'.repeat(24)}-br"`);
  t.same(assets.files.get('sw.js')!.variants.identity.headers, {
    'Cache-Control': 'no-cache',
    ETag: `"${'c'.repeat(24)}"`,
    Vary: 'Accept-Encoding',
    'X-Content-Type-Options': 'nosniff',
    'Service-Worker-Allowed': '/',
    'Content-Security-Policy': "default-src 'self'",
  }, 'the service worker: revalidated, its scope allowed up to /, under the policy');

  // The page with another body (its feature list filled in): new tags, each coding made here.
  const body = Buffer.from('<!doctype html><meta name="perch-features" content="search">');
  const filled = withBody(assets.page, body).variants;
  const tag = createHash('sha256').update(body).digest('hex').slice(0, 24);
  t.same(filled.identity.body, body);
  t.same(gunzipSync(filled.gzip.body), body, 'gzip of the new body');
  t.same(brotliDecompressSync(filled.br.body), body, 'brotli of the new body');
  t.equal(filled.br, filled.br, 'each coding is made once, when first asked for');
  t.equal(filled.identity.etag, `"${tag}"`);
  t.equal(filled.br.etag, `"${tag}-br"`);
  t.same(filled.gzip.headers, { ...page.gzip.headers, ETag: `"${tag}-gzip"` }, 'the same headers, with its own tag');
  t.same(filled.gzip.notModifiedHeaders, { ...page.gzip.notModifiedHeaders, ETag: `"${tag}-gzip"` });
});

t.test("the page's feature list: the features whose routes the server has", async (t) => {
  const all = [
    { method: 'GET' as const, path: '/api/notifications' },
    { method: 'GET' as const, path: '/api/suggest' },
    { method: 'GET' as const, path: '/api/posts/:id/replies' },
    { method: 'GET' as const, path: '/api/links/:code/qr' },
    { method: 'POST' as const, path: '/api/posts' },
  ];
  t.equal(featureList(all), 'notifications search replies link-extras');
  t.equal(featureList(all.filter((r) => r.path !== '/api/suggest')), 'notifications replies link-extras', 'a server without search');
  t.equal(featureList([{ method: 'POST', path: '/api/notifications' }]), '', 'the method counts');
  t.equal(featureList([]), '');
  const page = `<head>${FEATURES_ELEMENT}</head>`;
  t.equal(pageWithFeatures(page, 'search replies'), '<head><meta name="perch-features" content="search replies"></head>');
  t.equal(pageWithFeatures('<head></head>', 'search'), '<head></head>', 'a page without the element is left as it is');
});

t.test("the policy names the public origin's WebSocket forms", async (t) => {
  const csp = contentSecurityPolicy('https://perch.example:8443/');
  t.match(csp, /(^|; )connect-src 'self' ws:\/\/perch\.example:8443 wss:\/\/perch\.example:8443(;|$)/);
  t.match(contentSecurityPolicy('http://localhost:8080'), /connect-src 'self' ws:\/\/localhost:8080 wss:\/\/localhost:8080/);
});
