// The HTTP glue on a real uWS app with fixture routes: body limits, content types, strict schemas,
// 404/405, and 500 without internals.
import t from 'tap';
import { request as httpRequest } from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { loadNativeUws } from '../../src/http/uws';
import { Router, parseWith, presentedKey, type Route } from '../../src/http/router';

const uws = loadNativeUws();
const observed: string[] = [];
const router = new Router({
  authenticate: (key) => (key === 'good-key' ? { userId: 'u1', keyId: 'k1', admin: false } : undefined),
  observe: (route, method, status) => observed.push(`${method} ${route} ${status}`),
  threadIndex: 0,
});

const itemSchema = z.strictObject({ text: z.string().min(1).max(5), media_ids: z.array(z.string().regex(/^\d+$/)).max(2).optional() });
const routes: Route[] = [
  { method: 'POST', path: '/items', auth: true, body: 'json', handler: (ctx) => ({ status: 201, json: parseWith(itemSchema, ctx.json) }) },
  { method: 'GET', path: '/items/:id', handler: (ctx) => ({ status: 200, json: { id: ctx.params[0] } }) },
  { method: 'DELETE', path: '/items/:id', auth: true, handler: () => ({ status: 204 }) },
  { method: 'GET', path: '/boom', handler: () => { throw new Error('secret internal detail'); } },
  { method: 'GET', path: '/slow', handler: async () => { await new Promise((r) => setTimeout(r, 20)); return { status: 200, json: { slow: true } }; } },
  { method: 'POST', path: '/raw', body: 'raw', maxBodyBytes: 10, handler: (ctx) => ({ status: 200, json: { size: ctx.raw!.length } }) },
  {
    method: 'POST',
    path: '/raw-big',
    body: 'raw',
    maxBodyBytes: 4 << 20,
    handler: (ctx) => ({ status: 200, json: { size: ctx.raw!.length, sha256: createHash('sha256').update(ctx.raw!).digest('hex') } }),
  },
];
router.add(...routes);
const app = uws.App();
router.mount(app);

let base = '';
let listenSocket: unknown;
t.before(
  () =>
    new Promise<void>((resolve) => {
      app.listen('127.0.0.1', 0, (sock) => {
        listenSocket = sock;
        base = `http://127.0.0.1:${uws.us_socket_local_port(sock as never)}`;
        resolve();
      });
    }),
);
t.teardown(() => {
  uws.us_listen_socket_close(listenSocket as never);
  (app as unknown as { close(): void }).close();
});

async function call(method: string, path: string, init: { body?: string | Buffer; headers?: Record<string, string> } = {}) {
  const r = await fetch(base + path, { method, body: init.body, headers: init.headers });
  const text = await r.text();
  return { status: r.status, headers: r.headers, text, json: text ? JSON.parse(text) : undefined };
}
const auth = { authorization: 'Bearer good-key', 'content-type': 'application/json' };

t.test('valid JSON is parsed and validated', async (t) => {
  const r = await call('POST', '/items', { body: JSON.stringify({ text: 'hi' }), headers: auth });
  t.equal(r.status, 201);
  t.same(r.json, { text: 'hi' });
});

t.test('unknown fields are rejected and named', async (t) => {
  const r = await call('POST', '/items', { body: JSON.stringify({ text: 'hi', colour: 'red' }), headers: auth });
  t.equal(r.status, 400);
  t.equal(r.json.error, 'invalid_request');
  t.same(r.json.details, [{ path: 'colour', message: 'unknown field "colour"' }]);
  t.equal(r.json.message, 'colour: unknown field "colour"', 'one problem: the message is the problem');
  const two = await call('POST', '/items', { body: JSON.stringify({ text: 'hi', colour: 'red', size: 2 }), headers: auth });
  t.equal(two.json.message, 'The request is invalid.', 'several: one sentence, and the details name each');
  t.same(two.json.details.map((d: { path: string }) => d.path).sort(), ['colour', 'size']);
});

t.test('validation details carry dot-joined paths', async (t) => {
  const r = await call('POST', '/items', { body: JSON.stringify({ text: 'hi', media_ids: ['1', 'x'] }), headers: auth });
  t.equal(r.status, 400);
  t.equal(r.json.details.length, 1);
  t.equal(r.json.details[0].path, 'media_ids.1');
  t.type(r.json.message, 'string');
});

t.test('malformed JSON is 400, a missing body is 400', async (t) => {
  const bad = await call('POST', '/items', { body: '{"text": ', headers: auth });
  t.equal(bad.status, 400);
  t.equal(bad.json.error, 'invalid_request');
  const empty = await call('POST', '/items', { body: '', headers: auth });
  t.equal(empty.status, 400);
});

t.test('a Content-Type other than application/json is 415', async (t) => {
  const r = await call('POST', '/items', { body: 'text=hi', headers: { authorization: 'Bearer good-key', 'content-type': 'application/x-www-form-urlencoded' } });
  t.equal(r.status, 415);
  t.equal(r.json.error, 'unsupported_media_type');
  const charset = await call('POST', '/items', { body: '{"text":"ok"}', headers: { ...auth, 'content-type': 'application/json; charset=utf-8' } });
  t.equal(charset.status, 201, 'a charset parameter is fine');
});

t.test('a JSON body over 16 KiB is 413', async (t) => {
  const big = JSON.stringify({ text: 'x'.repeat(17 * 1024) });
  const r = await call('POST', '/items', { body: big, headers: auth });
  t.equal(r.status, 413);
  t.equal(r.json.error, 'payload_too_large');
  const exactly = JSON.stringify({ text: 'x'.repeat(16 * 1024 - 11) });
  t.equal(Buffer.byteLength(exactly), 16 * 1024);
  const ok = await call('POST', '/items', { body: exactly, headers: auth });
  t.equal(ok.status, 400, 'a body of exactly 16 KiB is read (and then fails validation)');
});

/** POSTs `parts` as a chunked body, one write per part with a pause between, so the server reads them as separate chunks. */
function postInParts(path: string, parts: Buffer[], headers: Record<string, string>): Promise<{ status: number; json: { [k: string]: unknown } }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(base + path, { method: 'POST', headers: { ...headers, 'transfer-encoding': 'chunked' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
    });
    req.on('error', reject);
    void (async () => {
      for (const part of parts) {
        req.write(part);
        await new Promise((r) => setTimeout(r, 20));
      }
      req.end();
    })();
  });
}

t.test('a JSON body in one chunk or in several reads the same; bytes that are not UTF-8 are 400 either way', async (t) => {
  const short = Buffer.from(JSON.stringify({ text: 'hé' }));
  t.same((await call('POST', '/items', { body: short, headers: auth })).json, { text: 'hé' }, 'in one chunk');
  // Split inside the two bytes of "é": each part alone is not UTF-8, the whole is.
  const cut = short.indexOf(0xc3) + 1;
  const parts = await postInParts('/items', [short.subarray(0, cut), short.subarray(cut)], auth);
  t.equal(parts.status, 201);
  t.same(parts.json, { text: 'hé' }, 'the parts joined');
  // Refused the same in one chunk and split at `cut`.
  const refused = async (body: Buffer, cut: number, message: string) => {
    const one = await call('POST', '/items', { body, headers: auth });
    t.same([one.status, one.json.message], [400, message], 'in one chunk');
    const split = await postInParts('/items', [body.subarray(0, cut), body.subarray(cut)], auth);
    t.same([split.status, split.json.message], [400, message], 'in two');
  };
  await refused(Buffer.from('{"text":"h\xff"}', 'latin1'), 5, 'The body is not valid UTF-8 JSON.');
  // A byte-order mark is not JSON (RFC 8259 lets a parser refuse it).
  await refused(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), short]), 2, 'The body is not valid JSON.');
});

t.test('raw bodies respect their own limit', async (t) => {
  t.equal((await call('POST', '/raw', { body: Buffer.alloc(10) })).json.size, 10);
  t.equal((await call('POST', '/raw', { body: Buffer.alloc(11) })).status, 413);
});

t.test('a large raw body arrives whole, in many chunks, with its length declared or sent chunked', async (t) => {
  const bytes = randomBytes(3 << 20);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const declared = await call('POST', '/raw-big', { body: bytes });
  t.same(declared.json, { size: bytes.length, sha256 }, 'with Content-Length');
  // Without a length: Transfer-Encoding: chunked, in pieces of 100 KiB.
  const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpRequest(base + '/raw-big', { method: 'POST' }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    for (let i = 0; i < bytes.length; i += 100 << 10) req.write(bytes.subarray(i, i + (100 << 10)));
    req.end();
  });
  t.equal(chunked.status, 200);
  t.same(JSON.parse(chunked.body), { size: bytes.length, sha256 }, 'chunked');
  t.equal((await call('POST', '/raw-big', { body: Buffer.alloc((4 << 20) + 1) })).status, 413, 'over its limit');
  t.same((await call('POST', '/raw-big', { body: Buffer.alloc(0) })).json, { size: 0, sha256: createHash('sha256').digest('hex') }, 'empty');
});

t.test('authentication: missing, unknown and malformed keys are 401 with WWW-Authenticate', async (t) => {
  for (const headers of [{}, { authorization: 'Bearer nope' }, { authorization: 'Basic abc' }, { 'x-api-key': 'nope' }] as Array<Record<string, string>>) {
    const r = await call('DELETE', '/items/1', { headers });
    t.equal(r.status, 401);
    t.equal(r.headers.get('www-authenticate'), 'Bearer');
    t.equal(r.json.error, 'unauthorized');
  }
  t.equal((await call('DELETE', '/items/1', { headers: { 'x-api-key': 'good-key' } })).status, 204);
  t.equal((await call('DELETE', '/items/1', { headers: { authorization: 'bearer good-key' } })).status, 204);
});

t.test('404 for unknown routes, 405 with Allow for known paths', async (t) => {
  const nf = await call('GET', '/nothing/here');
  t.equal(nf.status, 404);
  t.same(Object.keys(nf.json).sort(), ['error', 'message']);
  const na = await call('PUT', '/items/7');
  t.equal(na.status, 405);
  t.equal(na.headers.get('allow'), 'GET, HEAD, DELETE');
  t.equal(na.json.error, 'method_not_allowed');
});

t.test('HEAD answers like GET without a body', async (t) => {
  const r = await call('HEAD', '/items/42');
  t.equal(r.status, 200);
  t.equal(r.text, '');
});

t.test('path parameters are percent-decoded', async (t) => {
  t.same((await call('GET', '/items/a%20b')).json, { id: 'a b' });
});

t.test('a failing handler is a 500 without internals, with a request id', async (t) => {
  const r = await call('GET', '/boom');
  t.equal(r.status, 500);
  t.equal(r.json.error, 'internal');
  t.notMatch(r.text, /secret internal detail/);
  t.notMatch(r.text, /at .*\.js/);
  t.match(r.json.request_id, /^0-[0-9a-z]+$/);
  t.equal(r.headers.get('x-request-id'), r.json.request_id);
});

t.test('asynchronous handlers and metrics observation', async (t) => {
  t.same((await call('GET', '/slow')).json, { slow: true });
  t.ok(observed.includes('GET /slow 200'));
  t.ok(observed.includes('PUT /items/:id 405'));
  t.ok(observed.includes('GET unmatched 404'));
});

t.test('the API key presented: a Bearer header (one word after the scheme) wins over X-Api-Key', async (t) => {
  const key = (authorization: string, apiKey = '') => presentedKey({ authorization, apiKey });
  t.equal(key('Bearer perch_abc'), 'perch_abc');
  t.equal(key('  bearer \t perch_abc  '), 'perch_abc', 'any case, blanks around and between');
  t.equal(key('\u00a0Bearer\u00a0perch_abc\u00a0'), 'perch_abc', 'Unicode blanks count as blanks');
  t.equal(key('Bearer', 'perch_x'), '', 'the scheme alone: no key, and X-Api-Key is not read');
  t.equal(key('Bearer perch_a perch_b', 'perch_x'), '', 'two words: no key');
  t.equal(key('Bearerperch_abc', ' perch_x '), 'perch_x', 'not the Bearer scheme: X-Api-Key, trimmed');
  t.equal(key('Basic dXNlcjpwYXNz', 'perch_x'), 'perch_x', "another scheme is a proxy's: X-Api-Key");
  t.equal(key('', ''), '', 'neither header');
});
