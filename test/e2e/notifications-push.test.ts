import t from 'tap';
import { openSqlite } from '../../src/store/sqlite';
import { createECDH, createPublicKey, randomBytes, verify, type ECDH } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
// http_ece ships no types: decrypt(buffer, {version, privateKey, authSecret}) → Buffer.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const ece = require('http_ece') as { decrypt(body: Buffer, params: { version: string; privateKey: ECDH; authSecret: string }): Buffer };
import { rmSync } from 'node:fs';
import { startServer, tempDataDir, type Key, type TestServer } from '../helpers/server';
import { createPost, eventually } from '../social/helpers';
import { like, metric, notificationsOf } from '../notifications/helpers';

const SUBJECT = 'mailto:ops@example.org';

/** What a browser keeps for one push subscription: its key pair and auth secret. */
interface BrowserSubscription {
  endpoint: string;
  ecdh: ECDH;
  auth: string;
  json: { endpoint: string; expirationTime: null; keys: { p256dh: string; auth: string } };
}

function browserSubscription(endpoint: string): BrowserSubscription {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  const auth = randomBytes(16).toString('base64url');
  return { endpoint, ecdh, auth, json: { endpoint, expirationTime: null, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth } } };
}

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  status: number;
}

/**
 * A push service on 127.0.0.1: it checks each request's VAPID Authorization header against the
 * server's public key (RFC 8292) and answers by path: /ok → 201, /gone → 410, /flaky → 500 twice
 * then 201, /hang → never.
 */
class PushService {
  readonly received: Received[] = [];
  readonly problems: string[] = [];
  private readonly hanging: ServerResponse[] = [];
  private flakyCount = 0;
  private server!: Server;
  origin = '';

  constructor(private readonly vapidPublicKey: string) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => this.handle(req, res, Buffer.concat(chunks)));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private handle(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
    const path = req.url ?? '';
    const problem = this.checkVapid(req.headers.authorization ?? '');
    if (problem) this.problems.push(`${path}: ${problem}`);
    let status = 201;
    if (path.startsWith('/gone')) status = 410;
    if (path.startsWith('/flaky')) status = ++this.flakyCount <= 2 ? 500 : 201;
    this.received.push({ path, headers: req.headers, body, status });
    if (path.startsWith('/hang')) {
      this.hanging.push(res);
      return;
    }
    res.writeHead(problem ? 403 : status).end();
  }

  /** Why an Authorization header is not a valid VAPID signature for this origin, or ''. */
  private checkVapid(header: string): string {
    const m = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(header);
    if (!m) return `not a vapid Authorization header: ${header}`;
    const [, jwt, k] = m;
    if (k !== this.vapidPublicKey) return 'k is not the server\'s public key';
    const [h, p, s] = jwt.split('.');
    const head = JSON.parse(Buffer.from(h, 'base64url').toString());
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    if (head.alg !== 'ES256' || head.typ !== 'JWT') return `header ${JSON.stringify(head)}`;
    if (claims.aud !== this.origin) return `aud ${claims.aud}`;
    if (claims.sub !== SUBJECT) return `sub ${claims.sub}`;
    const now = Date.now() / 1000;
    if (!(claims.exp > now && claims.exp <= now + 24 * 3600)) return `exp ${claims.exp}`;
    const point = Buffer.from(k, 'base64url');
    const key = createPublicKey({
      key: { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') },
      format: 'jwk',
    });
    const ok = verify('sha256', Buffer.from(`${h}.${p}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url'));
    return ok ? '' : 'bad signature';
  }

  to(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** The JSON a subscription's browser reads from a push message (RFC 8291, aes128gcm). */
function decrypt(sub: BrowserSubscription, body: Buffer): any {
  return JSON.parse(ece.decrypt(body, { version: 'aes128gcm', privateKey: sub.ecdh, authSecret: sub.auth }).toString('utf8'));
}

async function subscribe(server: TestServer, key: string, sub: BrowserSubscription): Promise<any> {
  const r = await server.post('/api/push/subscriptions', { key, json: sub.json });
  if (r.status !== 201) throw new Error(`subscribe: ${r.status} ${r.text}`);
  return r.json;
}

let server: TestServer;
let push: PushService;
let ben: Key;

t.before(async () => {
  server = await startServer({ config: { push: { allow_insecure_endpoints: true, retry_base_ms: 50, subject: SUBJECT } } });
  const vapid = await server.get('/api/push/vapid-public-key');
  push = new PushService(vapid.json.public_key);
  await push.start();
  ben = await server.keygen('ben');
});
t.teardown(async () => {
  await server.close();
  await push.close();
});

t.test('the VAPID public key: made at the first start', async (t) => {
  const r = await server.get('/api/push/vapid-public-key');
  t.equal(r.status, 200);
  t.same(Object.keys(r.json), ['public_key']);
  const point = Buffer.from(r.json.public_key, 'base64url');
  t.equal(point.length, 65);
  t.equal(point[0], 4, 'an uncompressed P-256 point');
  t.equal(point.toString('base64url'), r.json.public_key, 'base64url without padding');
});

t.test('subscriptions: create, the same endpoint again, list, delete, and refusals', async (t) => {
  const ann = await server.keygen('ann_subs');
  const sub = browserSubscription(`${push.origin}/ok/subs`);
  const created = await server.post('/api/push/subscriptions', { key: ann.key, json: sub.json });
  t.equal(created.status, 201);
  t.same(Object.keys(created.json).sort(), ['created_at', 'endpoint', 'id']);
  t.equal(created.json.endpoint, sub.endpoint);
  t.equal(created.headers.get('location'), `/api/push/subscriptions/${created.json.id}`);
  const again = await server.post('/api/push/subscriptions', { key: ann.key, json: { endpoint: sub.endpoint, keys: sub.json.keys } });
  t.equal(again.status, 200, again.text);
  t.same(again.json, created.json, 'the existing one');
  const list = await server.get('/api/push/subscriptions', { key: ann.key });
  t.same(list.json, { items: [created.json], next_cursor: null });
  t.same((await server.get('/api/push/subscriptions', { key: ben.key })).json.items, [], "not in others' lists");

  const bad = async (json: unknown, path: string) => {
    const r = await server.post('/api/push/subscriptions', { key: ann.key, json });
    t.equal(r.status, 400, `${path}: ${JSON.stringify(json).slice(0, 80)}`);
    t.ok(r.json.details.some((d: any) => d.path === path), `names ${path}: ${JSON.stringify(r.json.details)}`);
  };
  const other = browserSubscription(`${push.origin}/ok/other`);
  await bad({ ...other.json, keys: { ...other.json.keys, p256dh: other.json.keys.p256dh.slice(4) } }, 'keys.p256dh');
  await bad({ ...other.json, keys: { ...other.json.keys, auth: 'c2hvcnQ' } }, 'keys.auth');
  await bad({ ...other.json, endpoint: 'ftp://127.0.0.1/x' }, 'endpoint');
  await bad({ ...other.json, endpoint: 'not a url' }, 'endpoint');
  await bad({ ...other.json, extra: true }, 'extra');
  await bad({ endpoint: other.endpoint }, 'keys');
  t.equal((await server.post('/api/push/subscriptions', { json: other.json })).status, 401);
  t.equal((await server.get('/api/push/subscriptions?limit=0', { key: ann.key })).status, 400);
  t.equal((await server.get('/api/push/subscriptions', { key: ann.key })).json.items.length, 1, 'nothing added by refused requests');

  t.equal((await server.request('DELETE', `/api/push/subscriptions/${created.json.id}`, { key: ben.key })).status, 404, "another user's");
  t.equal((await server.request('DELETE', '/api/push/subscriptions/999999', { key: ann.key })).status, 404);
  t.equal((await server.request('DELETE', '/api/push/subscriptions/x', { key: ann.key })).status, 404);
  t.equal((await server.request('DELETE', `/api/push/subscriptions/${created.json.id}`, { key: ann.key })).status, 204);
  t.same((await server.get('/api/push/subscriptions', { key: ann.key })).json.items, []);
});

t.test('an endpoint is stored as a URL parser writes it: spellings of one endpoint are one subscription', async (t) => {
  const eli = await server.keygen('eli_case');
  const port = new URL(push.origin).port;
  const sub = browserSubscription(`HTTP://127.0.0.1:${port}/ok/Eli`);
  const created = await server.post('/api/push/subscriptions', { key: eli.key, json: sub.json });
  t.equal(created.status, 201);
  t.equal(created.json.endpoint, `http://127.0.0.1:${port}/ok/Eli`, 'the scheme in lower case; the path as sent');
  for (const endpoint of [`http://127.0.0.1:${port}/ok/Eli`, `Http://127.0.0.1:${port}/ok/Eli`]) {
    const again = await server.post('/api/push/subscriptions', { key: eli.key, json: { ...sub.json, endpoint } });
    t.equal(again.status, 200, endpoint);
    t.same(again.json, created.json, `${endpoint}: the existing one`);
  }
  const pathCase = await server.post('/api/push/subscriptions', { key: eli.key, json: browserSubscription(`http://127.0.0.1:${port}/ok/eli`).json });
  t.equal(pathCase.status, 201, 'a path in another case is another endpoint');
  const host = await server.post('/api/push/subscriptions', { key: eli.key, json: browserSubscription('https://PUSH.Example.COM:443/x/Eli').json });
  t.equal(host.status, 201);
  t.equal(host.json.endpoint, 'https://push.example.com/x/Eli', 'the host in lower case, without the default port');
  const hostAgain = await server.post('/api/push/subscriptions', { key: eli.key, json: browserSubscription('https://push.example.com/x/Eli').json });
  t.equal(hostAgain.status, 200);
  t.equal(hostAgain.json.id, host.json.id);
  const list = await server.get('/api/push/subscriptions', { key: eli.key });
  t.same(list.json.items.map((s: { endpoint: string }) => s.endpoint).sort(), [`http://127.0.0.1:${port}/ok/Eli`, `http://127.0.0.1:${port}/ok/eli`, 'https://push.example.com/x/Eli'].sort(), 'three subscriptions, no more');
  t.equal((await server.request('DELETE', `/api/push/subscriptions/${host.json.id}`, { key: eli.key })).status, 204);
  t.equal((await server.request('DELETE', `/api/push/subscriptions/${pathCase.json.id}`, { key: eli.key })).status, 204);

  // The one left gets one message for one notification, at the address as stored.
  const post = await createPost(server, eli.key, 'push me once');
  await like(server, ben.key, post.id);
  const { value: request } = await eventually('the push to the stored endpoint', 10_000, async () => push.to('/ok/Eli')[0]);
  t.equal(decrypt(sub, request.body).data.post_id, post.id);
  t.equal(push.to('/ok/Eli').length, 1, 'one subscription, one message');
});

t.test('the list of subscriptions: newest first by id, every one reached by paging past id 9', async (t) => {
  const cy = await server.keygen('cy_subs');
  // Another user's first, so that cy's ids run across 9 -> 10 (and 99 -> 100 would read alike).
  const dee = await server.keygen('dee_subs');
  for (let i = 0; i < 3; i++) await subscribe(server, dee.key, browserSubscription(`${push.origin}/ok/dee-${i}`));
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) {
    const r = await server.post('/api/push/subscriptions', { key: cy.key, json: browserSubscription(`${push.origin}/ok/cy-${i}`).json });
    t.equal(r.status, 201);
    ids.push(r.json.id);
  }
  const newestFirst = [...ids].sort((a, b) => Number(BigInt(b) - BigInt(a)));
  t.ok(newestFirst.some((id) => id.length !== newestFirst[0].length), `ids of different lengths: ${newestFirst.join(',')}`);
  const all = await server.get('/api/push/subscriptions?limit=100', { key: cy.key });
  t.same(all.json.items.map((s: any) => s.id), newestFirst, 'one page: newest first, by number');
  const paged: string[] = [];
  let cursor: string | null = null;
  do {
    const r = await server.get(`/api/push/subscriptions?limit=5${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key: cy.key });
    t.equal(r.status, 200);
    paged.push(...r.json.items.map((s: any) => s.id));
    cursor = r.json.next_cursor;
  } while (cursor !== null);
  t.same(paged, newestFirst, 'pages of 5: every subscription once, in order');
});

t.test('a notification to a user with no open socket is pushed, encrypted and signed', async (t) => {
  const ann = await server.keygen('ann_push');
  const sub = browserSubscription(`${push.origin}/ok/ann`);
  await subscribe(server, ann.key, sub);
  const post = await createPost(server, ann.key, 'push me');
  await like(server, ben.key, post.id);
  const { value: request } = await eventually('a push request', 10_000, async () => push.to('/ok/ann')[0]);
  t.same(push.problems, [], 'the VAPID header checks out');
  t.equal(request.headers['content-encoding'], 'aes128gcm');
  t.equal(request.headers.ttl, '86400');
  t.equal(request.headers['content-type'], 'application/octet-stream');
  const message = decrypt(sub, request.body);
  const [listed] = await notificationsOf(server, ann.key);
  t.same(message, { type: 'notification', data: listed }, 'the same JSON as the WebSocket message');
  await eventually('delivered counted', 10_000, async () => ((await metric(server, 'perch_push_deliveries_total', 'outcome="delivered"')) >= 1 ? true : undefined));
});

t.test('a user with an open socket gets the socket message and no push', async (t) => {
  const cid = await server.keygen('cid_online');
  const dan = await server.keygen('dan_offline');
  await subscribe(server, cid.key, browserSubscription(`${push.origin}/ok/cid`));
  const danSub = browserSubscription(`${push.origin}/ok/dan`);
  await subscribe(server, dan.key, danSub);
  const ws = new WebSocket(server.url.replace('http:', 'ws:') + '/ws', { headers: { authorization: `Bearer ${cid.key}` } });
  const messages: any[] = [];
  ws.on('message', (d) => messages.push(JSON.parse(d.toString())));
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const cidPost = await createPost(server, cid.key, 'online');
  await like(server, ben.key, cidPost.id);
  await eventually('the socket message', 10_000, async () => messages.find((m) => m.data.post_id === cidPost.id));
  // Deliveries are made in order: once a later notification of dan's is pushed, cid's was decided.
  const danPost = await createPost(server, dan.key, 'offline');
  await like(server, ben.key, danPost.id);
  const { value: danPush } = await eventually("dan's push", 10_000, async () => push.to('/ok/dan')[0]);
  t.equal(decrypt(danSub, danPush.body).data.post_id, danPost.id);
  t.same(push.to('/ok/cid'), [], 'no push for the user whose socket is open');
  ws.close();
});

t.test('404 or 410 deletes the subscription', async (t) => {
  const eve = await server.keygen('eve_gone');
  const created = await subscribe(server, eve.key, browserSubscription(`${push.origin}/gone/eve`));
  const post = await createPost(server, eve.key, 'gone');
  await like(server, ben.key, post.id);
  await eventually('the push request', 10_000, async () => push.to('/gone/eve')[0]);
  await eventually('the subscription deleted', 10_000, async () => {
    const r = await server.get('/api/push/subscriptions', { key: eve.key });
    return r.json.items.length === 0 ? true : undefined;
  });
  t.equal((await server.request('DELETE', `/api/push/subscriptions/${created.id}`, { key: eve.key })).status, 404);
  t.equal(push.to('/gone/eve').length, 1, 'not tried again');
  t.ok((await metric(server, 'perch_push_deliveries_total', 'outcome="gone"')) >= 1);
});

t.test("revoking a key forgets the push subscriptions registered with it: a lost device stops receiving", async (t) => {
  const phone = await server.keygen('fay_lost');
  const phoneKeyId = await server.newestKeyId(phone.user_id);
  const laptop = await server.keygen('fay_lost');
  t.not(laptop.key, phone.key, 'a second key of the same user');
  await subscribe(server, phone.key, browserSubscription(`${push.origin}/ok/fay-phone`));
  await subscribe(server, laptop.key, browserSubscription(`${push.origin}/ok/fay-laptop`));
  t.equal((await server.get('/api/push/subscriptions', { key: laptop.key })).json.items.length, 2, "both are the user's");

  const revoked = await server.cli(['keys', 'revoke', phoneKeyId]);
  t.equal(revoked.code, 0, revoked.stderr);
  t.equal(revoked.stdout.trim().split('\n').pop(), `revoked ${phoneKeyId}`, 'the command says what it always said');
  const left = (await server.get('/api/push/subscriptions', { key: laptop.key })).json.items as Array<{ endpoint: string }>;
  t.same(left.map((s) => new URL(s.endpoint).pathname), ['/ok/fay-laptop'], "the phone's subscription is gone");

  const post = await createPost(server, laptop.key, 'still here');
  await like(server, ben.key, post.id);
  await eventually('the push to the laptop', 10_000, async () => push.to('/ok/fay-laptop')[0]);
  t.equal(push.to('/ok/fay-phone').length, 0, 'nothing to the phone');
  const again = await server.cli(['keys', 'revoke', phoneKeyId]);
  t.equal(again.code, 0, 'revoking again is still idempotent');

  // A subscription sent while a server still holds the key in its cache (a revocation written
  // straight to SQLite, announced to nobody): the writer checks the key in its own transaction.
  const tablet = await server.keygen('fay_lost');
  const tabletKeyId = await server.newestKeyId(tablet.user_id);
  await subscribe(server, tablet.key, browserSubscription(`${push.origin}/ok/fay-tablet`));
  const db = openSqlite(server.dataDir);
  db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ?').run(new Date().toISOString(), tabletKeyId);
  db.close();
  const late = await server.post('/api/push/subscriptions', { key: tablet.key, json: browserSubscription(`${push.origin}/ok/fay-tablet-2`).json });
  t.equal(late.status, 401, 'refused: the key is revoked');
  const endpoints = ((await server.get('/api/push/subscriptions', { key: laptop.key })).json.items as Array<{ endpoint: string }>).map((s) => new URL(s.endpoint).pathname);
  t.notOk(endpoints.includes('/ok/fay-tablet-2'), 'nothing stored under the revoked key');
});

t.test('revoking a key also forgets its user\'s subscriptions of unknown key (from before keys were recorded)', async (t) => {
  const old = await server.keygen('gil_old');
  const oldKeyId = await server.newestKeyId(old.user_id);
  const other = await server.keygen('gil_other');
  const oldSub = browserSubscription(`${push.origin}/ok/gil-old`);
  await subscribe(server, old.key, oldSub);
  await subscribe(server, other.key, browserSubscription(`${push.origin}/ok/gil-other`));
  // As subscriptions made before migration 11 are: no key recorded.
  const db = openSqlite(server.dataDir);
  db.prepare("UPDATE push_subscriptions SET key_id = NULL WHERE endpoint LIKE '%/ok/gil-%'").run();
  db.close();
  const spare = await server.keygen('gil_old');

  const revoked = await server.cli(['keys', 'revoke', oldKeyId]);
  t.equal(revoked.code, 0, revoked.stderr);
  t.same((await server.get('/api/push/subscriptions', { key: spare.key })).json.items, [], "the user's subscription of unknown key is gone");
  const others = (await server.get('/api/push/subscriptions', { key: other.key })).json.items as Array<{ endpoint: string }>;
  t.same(others.map((s) => new URL(s.endpoint).pathname), ['/ok/gil-other'], "another user's stays");

  // The browser that still holds the subscription registers it again at its next visit, under the
  // key it is signed in with now.
  const again = await server.post('/api/push/subscriptions', { key: spare.key, json: oldSub.json });
  t.equal(again.status, 201, 'registered again');
  const post = await createPost(server, spare.key, 'back');
  await like(server, ben.key, post.id);
  await eventually('the push after registering again', 10_000, async () => push.to('/ok/gil-old')[0]);
});

t.test('5xx is retried with backoff until it is delivered', async (t) => {
  const fay = await server.keygen('fay_flaky');
  const sub = browserSubscription(`${push.origin}/flaky/fay`);
  await subscribe(server, fay.key, sub);
  const retriedBefore = await metric(server, 'perch_push_deliveries_total', 'outcome="retried"');
  const post = await createPost(server, fay.key, 'flaky');
  await like(server, ben.key, post.id);
  const { value: tries } = await eventually('three tries', 10_000, async () => {
    const list = push.to('/flaky/fay');
    return list.length === 3 ? list : undefined;
  });
  t.same(tries.map((r) => r.status), [500, 500, 201]);
  for (const r of tries) t.equal(decrypt(sub, r.body).data.post_id, post.id);
  t.equal((await metric(server, 'perch_push_deliveries_total', 'outcome="retried"')) - retriedBefore, 2);
  t.same((await server.get('/api/push/subscriptions', { key: fay.key })).json.items.length, 1, 'kept');
});

t.test('a push service that hangs delays nobody else', async (t) => {
  const gus = await server.keygen('gus_hang');
  const hal = await server.keygen('hal_ok');
  await subscribe(server, gus.key, browserSubscription(`${push.origin}/hang/gus`));
  const halSub = browserSubscription(`${push.origin}/ok/hal`);
  await subscribe(server, hal.key, halSub);
  const gusPost = await createPost(server, gus.key, 'hang');
  await like(server, ben.key, gusPost.id);
  await eventually('the hanging request', 10_000, async () => push.to('/hang/gus')[0]);
  const halPost = await createPost(server, hal.key, 'fine');
  await like(server, ben.key, halPost.id);
  const { value: r } = await eventually("hal's push while gus's hangs", 10_000, async () => push.to('/ok/hal')[0]);
  t.equal(decrypt(halSub, r.body).data.post_id, halPost.id);
});

t.test('endpoints on private or loopback addresses are refused by default; push can be turned off', async (t) => {
  const dataDir = tempDataDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startServer({ dataDir });
  const key = (await first.get('/api/push/vapid-public-key')).json.public_key;
  await first.close();
  const strict = await startServer({ dataDir });
  t.teardown(() => strict.close());
  t.equal((await strict.get('/api/push/vapid-public-key')).json.public_key, key, 'the key pair is kept across restarts');
  const ann = await strict.keygen('ann');
  for (const endpoint of ['http://127.0.0.1:9/x', 'https://127.0.0.1/x', 'https://10.1.2.3/x', 'https://[::1]/x', 'https://169.254.169.254/x', 'https://localhost/x', 'http://push.example.com/x']) {
    const r = await strict.post('/api/push/subscriptions', { key: ann.key, json: browserSubscription(endpoint).json });
    t.equal(r.status, 400, endpoint);
    t.equal(r.json.details[0].path, 'endpoint');
  }
  const ok = await strict.post('/api/push/subscriptions', { key: ann.key, json: browserSubscription('https://push.example.com/abc').json });
  t.equal(ok.status, 201, 'a public name is accepted (its addresses are checked before each request)');

  const off = await startServer({ config: { push: { enabled: false } } });
  t.teardown(() => off.close());
  const ben2 = await off.keygen('ben');
  t.equal((await off.get('/api/push/vapid-public-key')).status, 404);
  t.equal((await off.post('/api/push/subscriptions', { key: ben2.key, json: browserSubscription('https://push.example.com/abc').json })).status, 404);
  t.equal((await off.get('/api/push/subscriptions', { key: ben2.key })).status, 404);
});
