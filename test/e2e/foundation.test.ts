// The appliance answers, authenticates and fails cleanly: a real server on an ephemeral port.
import t from 'tap';
import { rawExchange } from '../helpers/raw-http';
import { startServer, type TestServer, type Key } from '../helpers/server';

let server: TestServer;
let alice: Key;
t.before(async () => {
  server = await startServer();
  alice = await server.keygen('alice');
});
t.teardown(() => server.close());

t.test('GET /healthz answers {"status":"ok"}', async (t) => {
  const r = await server.get('/healthz');
  t.equal(r.status, 200);
  t.equal(r.headers.get('content-type'), 'application/json');
  t.same(r.json, { status: 'ok' });
});

t.test('both auth headers identify the key owner', async (t) => {
  const bearer = await server.get('/api/me', { headers: { authorization: `Bearer ${alice.key}` } });
  t.equal(bearer.status, 200);
  t.same(bearer.json, { id: alice.user_id, handle: 'alice', created_at: bearer.json.created_at, followers_count: 0, following_count: 0, unread_notifications: 0 });
  t.match(bearer.json.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const header = await server.get('/api/me', { headers: { 'x-api-key': alice.key } });
  t.equal(header.status, 200);
  t.equal(header.json.id, alice.user_id);
});

t.test('missing, unknown and revoked keys answer 401 with WWW-Authenticate: Bearer', async (t) => {
  const missing = await server.get('/api/me');
  t.equal(missing.status, 401);
  t.equal(missing.headers.get('www-authenticate'), 'Bearer');
  t.same(Object.keys(missing.json).sort(), ['error', 'message']);
  t.equal(missing.json.error, 'unauthorized');
  const unknown = await server.get('/api/me', { key: 'perch_not-a-real-key' });
  t.equal(unknown.status, 401);

  const second = await server.keygen('alice');
  t.equal(second.user_id, alice.user_id, 'keygen for an existing handle adds a key to the same user');
  t.equal((await server.get('/api/me', { key: second.key })).status, 200);
  const revoke = await server.cli(['keys', 'revoke', await server.newestKeyId(second.user_id)]);
  t.equal(revoke.code, 0, revoke.stderr);
  const revoked = await server.get('/api/me', { key: second.key });
  t.equal(revoked.status, 401);
  t.equal(revoked.json.error, 'unauthorized');
  t.equal((await server.get('/api/me', { key: alice.key })).status, 200, 'the other key still works');
});

t.test('users by id and by @handle, case-insensitively; unknown is 404', async (t) => {
  const byId = await server.get(`/api/users/${alice.user_id}`);
  t.equal(byId.status, 200);
  t.equal(byId.json.handle, 'alice');
  const byHandle = await server.get('/api/users/@ALICE');
  t.equal(byHandle.json.id, alice.user_id);
  const none = await server.get('/api/users/@nobody');
  t.equal(none.status, 404);
  t.equal(none.json.error, 'not_found');
});

t.test('unknown routes are 404, wrong methods 405 with Allow', async (t) => {
  const nf = await server.get('/api/nothing-here');
  t.equal(nf.status, 404);
  t.equal(nf.json.error, 'not_found');
  const na = await server.request('DELETE', '/healthz');
  t.equal(na.status, 405);
  t.equal(na.headers.get('allow'), 'GET, HEAD');
  t.equal(na.json.error, 'method_not_allowed');
  const me = await server.request('POST', '/api/me', { key: alice.key });
  t.equal(me.status, 405);
});

t.test('HEAD answers with the headers of GET, Content-Length included, and no body', async (t) => {
  const get = await server.get('/healthz');
  const head = await server.request('HEAD', '/healthz');
  t.equal(head.status, 200);
  t.equal(head.headers.get('content-type'), 'application/json');
  t.equal(head.headers.get('content-length'), String(Buffer.byteLength(get.text)));
  t.equal(head.text, '');
  const missing = await server.request('HEAD', '/api/users/@nobody');
  t.equal(missing.status, 404);
  t.equal(missing.headers.get('content-length'), String(Buffer.byteLength((await server.get('/api/users/@nobody')).text)));
});

t.test('/metrics is Prometheus text counting requests of every thread', async (t) => {
  for (let i = 0; i < 40; i++) await server.get('/healthz');
  const r = await server.get('/metrics');
  t.equal(r.status, 200);
  t.match(r.headers.get('content-type'), /^text\/plain/);
  const line = r.text.split('\n').find((l) => l.startsWith('perch_http_requests_total{route="/healthz",method="GET",status="200"}'));
  t.ok(line, 'healthz counter present');
  t.ok(Number(line!.split(' ').pop()) >= 41, `all 41 healthz requests counted across threads: ${line}`);
  t.match(r.text, /perch_http_request_duration_seconds_bucket\{le="0.001",route="\/healthz",method="GET",status="200"\}/);
  t.match(r.text, /perch_http_threads \d/);
});

t.test('an endpoint that takes no body holds one sent anyway to the rules of every body', async (t) => {
  const bob = await server.keygen('bob_bodies');
  const post = await server.post('/api/posts', { key: alice.key, json: { text: 'a post to like with bodies' } });
  t.equal(post.status, 201);
  const like = `/api/posts/${post.json.id}/like`;
  const likes = async () => (await server.get(`/api/posts/${post.json.id}`)).json.like_count;

  // Refused, and nothing done: a field (unknown to it), a body not JSON, another type, too large.
  const field = await server.post(like, { key: bob.key, json: { liked: true } });
  t.equal(field.status, 400);
  t.same(field.json, { error: 'invalid_request', message: 'liked: unknown field "liked"', details: [{ path: 'liked', message: 'unknown field "liked"' }] });
  const refusals: Array<[number, string, Record<string, string>, string]> = [
    [400, '{bad', { 'content-type': 'application/json' }, 'not JSON'],
    [400, '[]', { 'content-type': 'application/json' }, 'not an object'],
    [400, 'null', { 'content-type': 'application/json' }, 'null'],
    [415, 'hello', { 'content-type': 'text/plain' }, 'another type'],
    [415, '{}', {}, 'no type'],
    [413, JSON.stringify({ x: 'a'.repeat(20_000) }), { 'content-type': 'application/json' }, 'over 16 KiB'],
  ];
  for (const [status, body, headers, what] of refusals) {
    const r = await server.post(like, { key: bob.key, body, headers });
    t.equal(r.status, status, what);
    t.equal(r.json?.error, { 400: 'invalid_request', 413: 'payload_too_large', 415: 'unsupported_media_type' }[status], `${what}: the contract's error`);
  }
  t.equal(await likes(), 0, 'no refused request liked the post');
  const follow = await server.post(`/api/users/${alice.user_id}/follow`, { key: bob.key, json: { notify: false } });
  t.equal(follow.status, 400, 'a follow with a field');
  t.equal((await server.get(`/api/users/${alice.user_id}`)).json.followers_count, 0, 'and nobody followed');
  t.equal((await server.post('/api/notifications/read-all', { key: bob.key, json: { ids: ['1'] } })).status, 400, 'marking read with a field');
  t.equal((await server.request('DELETE', `/api/posts/${post.json.id}`, { key: alice.key, json: { soft: true } })).status, 400, 'a deletion with a field');
  t.equal((await server.get(`/api/posts/${post.json.id}`)).status, 200, 'and the post is still there');

  // Accepted: no body, an empty one of any type, an empty object.
  t.equal((await server.post(like, { key: bob.key })).status, 204, 'no body');
  t.equal((await server.request('DELETE', like, { key: bob.key, body: '', headers: { 'content-type': 'text/plain' } })).status, 204, 'an empty body, whatever its type');
  t.equal((await server.post(like, { key: bob.key, json: {} })).status, 204, 'an empty object');
  t.equal(await likes(), 1);
  // A chunked body, which says its length only as it ends: empty is no body; anything else as above.
  const chunked = (body: string, type: string) =>
    `POST ${like} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${bob.key}\r\nContent-Type: ${type}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n` +
    (body ? `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n` : '') +
    '0\r\n\r\n';
  t.equal((await rawExchange(server.port, chunked('', 'text/plain'))).responses[0]?.status, 204, 'chunked and empty');
  t.equal((await rawExchange(server.port, chunked('{"x":1}', 'application/json'))).responses[0]?.status, 400, 'chunked with a field');
  t.equal((await rawExchange(server.port, chunked('hi', 'text/plain'))).responses[0]?.status, 415, 'chunked, another type');
  t.equal(await likes(), 1);
});
