import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { contentSecurityPolicy, loadWebAssets } from '../../src/web/assets';
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
});

t.test("the policy names the public origin's WebSocket forms", async (t) => {
  const csp = contentSecurityPolicy('https://perch.example:8443/');
  t.match(csp, /(^|; )connect-src 'self' ws:\/\/perch\.example:8443 wss:\/\/perch\.example:8443(;|$)/);
  t.match(contentSecurityPolicy('http://localhost:8080'), /connect-src 'self' ws:\/\/localhost:8080 wss:\/\/localhost:8080/);
});
