import t from 'tap';
import { pinnedThreadsTest } from '../helpers/command-test';
import WebSocket from 'ws';
import { rmSync } from 'node:fs';
import { startServer, tempDataDir, type Key, type TestServer } from '../helpers/server';
import { logLine } from '../helpers/logs';
import { createPost, eventually } from '../social/helpers';
import { like, metric, notificationsOf, seedUsers, waitForNotifications } from '../notifications/helpers';

/** A client socket and every message it received, parsed. */
interface Client {
  ws: WebSocket;
  messages: any[];
  closed: Promise<number>;
}

function wsUrl(server: TestServer, query = ''): string {
  return server.url.replace('http:', 'ws:') + '/ws' + query;
}

function connect(server: TestServer, opts: { key?: string; header?: 'authorization' | 'x-api-key' | 'query' } = {}): Promise<Client> {
  const { key, header = 'authorization' } = opts;
  const headers: Record<string, string> = {};
  if (key && header === 'authorization') headers.authorization = `Bearer ${key}`;
  if (key && header === 'x-api-key') headers['x-api-key'] = key;
  const ws = new WebSocket(wsUrl(server, key && header === 'query' ? `?access_token=${encodeURIComponent(key)}` : ''), { headers });
  const messages: any[] = [];
  ws.on('message', (data) => messages.push(JSON.parse(data.toString())));
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, messages, closed }));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode, headers: res.headers, body })));
    });
    ws.once('error', (err) => reject(err));
  });
}

async function refused(server: TestServer, opts: Parameters<typeof connect>[1]): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  try {
    const c = await connect(server, opts);
    c.ws.terminate();
  } catch (err) {
    const e = err as { status?: number; headers?: Record<string, string>; body?: string };
    if (e.status) return { status: e.status, headers: e.headers!, body: e.body! };
    throw err;
  }
  throw new Error('the upgrade was accepted');
}

/** Waits until the client received a notification message matching `ok`. */
async function received(client: Client, what: string, ok: (data: any) => boolean): Promise<any> {
  return (
    await eventually(what, 10_000, async () => client.messages.find((m) => m.type === 'notification' && ok(m.data)))
  ).value.data;
}

t.test('the upgrade: refused with 401 without a valid key; accepted with a header or access_token', async (t) => {
  const server = await startServer();
  t.teardown(() => server.close());
  const ann = await server.keygen('ann');
  for (const [what, opts] of [
    ['no key', {}],
    ['unknown key', { key: 'perch_' + 'x'.repeat(32) }],
    ['unknown access_token', { key: 'perch_' + 'y'.repeat(32), header: 'query' }],
  ] as const) {
    const r = await refused(server, opts);
    t.equal(r.status, 401, what);
    t.equal(r.headers['www-authenticate'], 'Bearer');
    t.equal(JSON.parse(r.body).error, 'unauthorized');
  }
  for (const header of ['authorization', 'x-api-key', 'query'] as const) {
    const c = await connect(server, { key: ann.key, header });
    t.equal(c.ws.readyState, WebSocket.OPEN, header);
    c.ws.close();
    await c.closed;
  }
  const plain = await server.get('/ws', { key: ann.key });
  t.equal(plain.status, 404, 'a plain GET is no upgrade');
  t.same(plain.json, { error: 'not_found', message: 'This is a WebSocket endpoint: send a WebSocket upgrade request (Upgrade: websocket).' });
  t.equal(plain.headers.get('x-ratelimit-limit'), null, 'answered as the endpoint, not as a short code');
  const head = await server.request('HEAD', '/ws', { key: ann.key });
  t.equal(head.status, 404, 'HEAD as GET');
  t.equal(head.headers.get('content-length'), String(Buffer.byteLength(plain.text)));
  // The endpoint is not public: without a valid key, a plain GET is told that first.
  const byToken = await server.get(`/ws?access_token=${encodeURIComponent(ann.key)}`);
  t.equal(byToken.status, 404, 'the key in ?access_token= counts as for the upgrade');
  const anonymous = await server.get('/ws');
  t.equal(anonymous.status, 401, 'no key');
  t.equal(anonymous.headers.get('www-authenticate'), 'Bearer');
  t.same(anonymous.json, { error: 'unauthorized', message: 'A valid API key is required.' });
  const unknown = await server.get('/ws', { key: 'perch_nobodysKeyAtAllxxxxxxxxxxxxxxxx' });
  t.equal(unknown.status, 401, 'an unknown key');
  t.equal(unknown.json.message, 'The API key is unknown or revoked.');
  t.equal((await server.request('HEAD', '/ws')).status, 401, 'HEAD without a key');
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
    const r = await server.request(method, '/ws', { key: ann.key });
    t.equal(r.status, 405, method);
    t.equal(r.headers.get('allow'), 'GET, HEAD', `${method}: Allow names what /ws answers`);
    t.equal(r.json.error, 'method_not_allowed');
  }
  const still = await connect(server, { key: ann.key });
  t.equal(still.ws.readyState, WebSocket.OPEN, 'the upgrade still goes through');
  still.ws.close();
  await still.closed;

  // A key revoked while its socket is open: the socket is closed (policy violation).
  const ben = await server.keygen('ben');
  const open = await connect(server, { key: ben.key });
  const revoke = await server.cli(['keys', 'revoke', await server.newestKeyId(ben.user_id)]);
  t.equal(revoke.code, 0, revoke.stderr);
  t.equal(await open.closed, 1008, 'closed once the key is revoked');
  t.equal((await refused(server, { key: ben.key })).status, 401, 'and refused from then on');
});

pinnedThreadsTest('every new or updated notification reaches every socket of its recipient, on either HTTP thread', async (t) => {
  const server = await startServer({ threads: 2 });
  t.teardown(() => server.close());
  const ann = await server.keygen('ann');
  const ben = await server.keygen('ben');
  const cid = await server.keygen('cid');
  // Linux spreads connections over the two threads' listeners by their addresses: with 16
  // sockets, both threads hold some (all on one thread: 1 chance in 32,768).
  const clients: Client[] = [];
  for (let i = 0; i < 16; i++) clients.push(await connect(server, { key: ann.key, header: i % 2 === 0 ? 'authorization' : 'query' }));
  const bystander = await connect(server, { key: ben.key });
  await eventually('16 sockets counted', 10_000, async () => ((await metric(server, 'perch_ws_open_sockets')) === 17 ? true : undefined));

  const post = await createPost(server, ann.key, 'watch this');
  await like(server, ben.key, post.id);
  const firsts = await Promise.all(clients.map((c, i) => received(c, `socket ${i}: the like`, (d) => d.post_id === post.id)));
  const [listed] = await notificationsOf(server, ann.key);
  for (const data of firsts) t.same(data, listed, 'the same object as the list shows');
  t.same(Object.keys(firsts[0]).sort(), ['actor_count', 'actor_ids', 'created_at', 'id', 'post_id', 'priority', 'read', 'type', 'updated_at']);

  await like(server, cid.key, post.id);
  const updates = await Promise.all(clients.map((c, i) => received(c, `socket ${i}: the update`, (d) => d.id === listed.id && d.actor_count === 2)));
  for (const data of updates) {
    t.same(data.actor_ids, [cid.user_id, ben.user_id]);
    t.ok(data.updated_at > listed.updated_at, 'an update has a new updated_at: (id, updated_at) tells it from a repeat');
  }
  t.same(bystander.messages, [], 'nothing for anybody else');
  t.ok((await metric(server, 'perch_ws_messages_sent_total')) >= 32);
  for (const c of [...clients, bystander]) c.ws.close();
  await Promise.all([...clients, bystander].map((c) => c.closed));
  await eventually('sockets closed', 10_000, async () => ((await metric(server, 'perch_ws_open_sockets')) === 0 ? true : undefined));
});

t.test('a reader that falls behind is cut off and logged; others go on', async (t) => {
  const dataDir = tempDataDir();
  // 100 users reply to each of ann's 10 posts, so that each notification of those posts names 100
  // actors; replies by them go on changing the rows, each change a message of about 2.4 kB.
  const repliers = seedUsers(dataDir, 'replier', 100);
  const server = await startServer({ dataDir, config: { notifications: { ws_backpressure_limit_bytes: 1024 } } });
  t.teardown(async () => {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const ann = await server.keygen('ann');
  const posts: any[] = [];
  for (let i = 0; i < 10; i++) posts.push(await createPost(server, ann.key, `post ${i}`));
  let replies = 0;
  const reply = (k: Key, post: any) => createPost(server, k.key, `reply ${replies++}`, { reply_to: post.id });
  for (let from = 0; from < repliers.length; from += 10) {
    await Promise.all(repliers.slice(from, from + 10).flatMap((k) => posts.map((p) => reply(k, p))));
  }
  await waitForNotifications(server, ann.key, '10 rows of 100 actors', (items) => items.length === 10 && items.every((n) => n.actor_count === 100));

  const slow = await connect(server, { key: ann.key });
  const healthy = await connect(server, { key: ann.key });
  // The slow reader stops reading: the kernel's buffers fill, then uWS's, then the limit is passed.
  (slow.ws as unknown as { _socket: { pause(): void } })._socket.pause();
  let round = 0;
  while ((await metric(server, 'perch_ws_slow_closed_total')) === 0) {
    if (replies >= 20_000) throw new Error('the slow reader was never cut off');
    await Promise.all(posts.map((p, i) => reply(repliers[(round * 10 + i) % repliers.length], p)));
    round++;
  }
  t.comment(`cut off after ${round} rounds of 10 replies`);
  t.equal(await metric(server, 'perch_ws_slow_closed_total'), 1, 'one socket closed');
  // The line comes on the server's stdout, not with any HTTP answer (helpers/logs.ts): waited for.
  t.ok(await logLine(server, (l) => l.includes('closed a WebSocket whose reader fell behind')), 'and said so in the log');
  await eventually('one socket left', 10_000, async () => ((await metric(server, 'perch_ws_open_sockets')) === 1 ? true : undefined));
  const last = await reply(repliers[0], posts[0]);
  await received(healthy, 'the healthy socket still receives', (d) => d.post_id === posts[0].id && d.updated_at >= last.created_at);
  t.equal(healthy.ws.readyState, WebSocket.OPEN);
  (slow.ws as unknown as { _socket: { resume(): void } })._socket.resume();
  await slow.closed;
  t.pass('the slow socket is closed');
  healthy.ws.close();
  await healthy.closed;
});

t.test('a stopping server closes its sockets with 1001 (going away), on every HTTP thread', async (t) => {
  const server = await startServer();
  t.teardown(() => server.close());
  const ann = await server.keygen('ann');
  // Enough sockets that with two HTTP threads both hold some (the kernel spreads connections).
  const clients = await Promise.all(Array.from({ length: 8 }, () => connect(server, { key: ann.key })));
  const reasons = clients.map((c) => new Promise<string>((resolve) => c.ws.once('close', (_code, reason) => resolve(reason.toString()))));
  t.equal(await server.stop(), 0, 'the server exits 0');
  t.same([...new Set(await Promise.all(clients.map((c) => c.closed)))], [1001], 'every socket got a close frame with 1001');
  t.same([...new Set(await Promise.all(reasons))], ['server stopping'], 'and the reason');
});
