// The appliance answers, authenticates and fails cleanly: a real server on an ephemeral port.
import t from 'tap';
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
