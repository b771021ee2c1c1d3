// Input that looks valid and is not: link targets with credentials or pointing back at perch
// through a loopback alias, and post text that shows nothing. Each is 400 and stores nothing.
import t from 'tap';
import { startServer, type Key, type TestServer } from '../helpers/server';

let server: TestServer;
let alice: Key;

t.before(async () => {
  // No public_origin: it is derived from the listening port (http://localhost:<port>), a loopback
  // origin, as on a fresh install.
  server = await startServer({ config: { anomaly: { max_links: 10000, max_same_domain: 10000 } } });
  alice = await server.keygen('alice');
});
t.teardown(() => server?.close());

async function linkCount(): Promise<number> {
  const r = await server.get('/api/links?limit=100', { key: alice.key });
  return r.json.items.length;
}

t.test('POST /api/shorten refuses credentials and every loopback alias of the public origin', async (t) => {
  const before = await linkCount();
  const port = server.port;
  const cases: Array<[string, string]> = [
    ['https://www.google.com@evil.example/', 'url: must not contain credentials (user:password@ before the host)'],
    ['https://user:secret@example.com/', 'url: must not contain credentials (user:password@ before the host)'],
    ['https://user@example.com/', 'url: must not contain credentials (user:password@ before the host)'],
    ['https://@example.com/', 'url: must not contain credentials (user:password@ before the host)'],
    [`http://localhost:${port}/abc`, 'url: must not point at this service'],
    [`http://127.0.0.1:${port}/abc`, 'url: must not point at this service'],
    [`http://127.0.0.2:${port}/abc`, 'url: must not point at this service'],
    [`http://[::1]:${port}/abc`, 'url: must not point at this service'],
    [`http://2130706433:${port}/abc`, 'url: must not point at this service'],
    [`https://LOCALHOST.:${port}/abc`, 'url: must not point at this service'],
  ];
  for (const [url, message] of cases) {
    const r = await server.post('/api/shorten', { key: alice.key, json: { url } });
    t.equal(r.status, 400, url);
    t.equal(r.json.error, 'invalid_request');
    t.equal(r.json.message, message, url);
    t.same(r.json.details.map((d: { path: string }) => d.path), ['url']);
  }
  t.equal(await linkCount(), before, 'no link was created');
  const otherPort = await server.post('/api/shorten', { key: alice.key, json: { url: 'http://localhost:3000/dev' } });
  t.equal(otherPort.status, 201, 'another port on the loopback interface is another service');
  t.equal(otherPort.json.url, 'http://localhost:3000/dev');
  const atInPath = await server.post('/api/shorten', { key: alice.key, json: { url: 'https://social.example/@alice' } });
  t.equal(atInPath.status, 201, 'an @ in the path is not a credential');
  t.equal(await linkCount(), before + 2);
});

t.test('POST /api/posts refuses text made only of control and format characters', async (t) => {
  const posts = async () => (await server.get(`/api/users/${alice.user_id}/posts?limit=100`)).json.items.length;
  const before = await posts();
  for (const text of ['\u0000', '\u0000\u0000\u0007', ' \u0000\n', '\u200b\u200d', '\ufeff', '\u202e\u0008 ']) {
    const r = await server.post('/api/posts', { key: alice.key, json: { text } });
    t.equal(r.status, 400, JSON.stringify(text));
    t.same(r.json, {
      error: 'invalid_request',
      message: 'text: text must contain something visible, not only white space and invisible characters',
      details: [{ path: 'text', message: 'text must contain something visible, not only white space and invisible characters' }],
    });
  }
  t.equal(await posts(), before, 'nothing stored');
  const mixed = await server.post('/api/posts', { key: alice.key, json: { text: 'tab\there' } });
  t.equal(mixed.status, 201, 'a control character among text is fine');
  t.equal(mixed.json.text, 'tab\there');
  t.equal(await posts(), before + 1);
});
