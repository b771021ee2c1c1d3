// Caching and type-sniffing headers over the wire: API answers (a user's own data) are never
// stored by a cache and never sniffed; the answers meant to be kept (media, web assets, the
// redirect's own) keep their own Cache-Control.
import t, { type Test } from 'tap';
import { startServer, type Key, type TestServer } from '../helpers/server';

let server: TestServer;
let user: Key;

t.before(async () => {
  server = await startServer();
  user = await server.keygen('headers');
});
t.teardown(() => server.close());

function noStore(t: Test, headers: Headers, what: string): void {
  t.equal(headers.get('cache-control'), 'no-store', `${what}: no cache stores it`);
  t.equal(headers.get('x-content-type-options'), 'nosniff', `${what}: no browser sniffs it`);
}

t.test('authenticated API answers, their errors and a streamed export are not stored', async (t) => {
  const post = await server.post('/api/posts', { key: user.key, json: { text: 'cache me not' } });
  t.equal(post.status, 201);
  noStore(t, post.headers, 'the 201 of a post');
  const timeline = await server.get('/api/timeline', { key: user.key });
  t.equal(timeline.status, 200);
  t.equal(timeline.json.items[0].text, 'cache me not');
  noStore(t, timeline.headers, 'the home timeline');
  const me = await server.get('/api/me', { key: user.key });
  t.equal(me.status, 200);
  noStore(t, me.headers, '/api/me');
  const like = await server.post(`/api/posts/${post.json.id}/like`, { key: user.key });
  t.equal(like.status, 204);
  noStore(t, like.headers, 'a 204');
  const link = await server.post('/api/shorten', { key: user.key, json: { url: 'https://example.com/cached' } });
  t.equal(link.status, 201);
  const csv = await fetch(`${server.url}/api/links/export?format=csv`, { headers: { authorization: `Bearer ${user.key}` } });
  t.equal(csv.status, 200);
  t.match(await csv.text(), /example\.com\/cached/);
  noStore(t, csv.headers, 'a streamed export');
  const unauthorized = await fetch(`${server.url}/api/timeline`);
  t.equal(unauthorized.status, 401);
  noStore(t, unauthorized.headers, 'a 401');
  const invalid = await server.post('/api/posts', { key: user.key, json: { text: '' } });
  t.equal(invalid.status, 400);
  noStore(t, invalid.headers, 'a 400');
  const unknown = await fetch(`${server.url}/api/nothing-here`);
  t.equal(unknown.status, 404);
  noStore(t, unknown.headers, 'an unknown path');
});

t.test('public API answers are not stored either', async (t) => {
  const post = await server.post('/api/posts', { key: user.key, json: { text: 'public, still not cached' } });
  const got = await fetch(`${server.url}/api/posts/${post.json.id}`);
  t.equal(got.status, 200);
  noStore(t, got.headers, 'a post');
  const suggest = await fetch(`${server.url}/api/suggest?prefix=ca`);
  t.equal(suggest.status, 200);
  noStore(t, suggest.headers, 'suggestions');
  const health = await fetch(`${server.url}/healthz`);
  t.equal(health.status, 200);
  noStore(t, health.headers, '/healthz');
});

t.test('answers meant to be kept keep their own caching', async (t) => {
  const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 1)]);
  const media = await server.post('/api/media', { key: user.key, body: png, headers: { 'content-type': 'image/png' } });
  t.equal(media.status, 201);
  noStore(t, media.headers, 'the upload\'s 201');
  const file = await fetch(server.url + media.json.url);
  t.equal(file.status, 200);
  t.equal(file.headers.get('cache-control'), 'public, max-age=3600', 'a media file is kept an hour');
  t.equal(file.headers.get('x-content-type-options'), 'nosniff');
  const link = await server.post('/api/shorten', { key: user.key, json: { url: 'https://example.com/kept' } });
  const redirect = await fetch(`${server.url}/${link.json.short_code}`, { redirect: 'manual' });
  t.equal(redirect.status, 302);
  t.equal(redirect.headers.get('cache-control'), 'private, no-store', 'the redirect keeps its own');
  const page = await fetch(`${server.url}/`);
  t.equal(page.status, 200);
  t.equal(page.headers.get('cache-control'), 'no-cache', 'the web client is revalidated, not refused');
});
