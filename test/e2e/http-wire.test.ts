// HTTP/1.1 on the wire, over raw TCP: what perch answers to requests that are framed oddly or
// hostile (pipelining behind a write, conflicting Content-Length, a Transfer-Encoding other than
// chunked, an overlong URL), and, for what the HTTP library (uWebSockets.js v20.30) handles
// before perch sees a request, what it does today (docs/deploy-proxy.md). A library upgrade that
// changes one of those shows up here.
import t from 'tap';
import { startServer, type Key, type TestServer } from '../helpers/server';
import { rawExchange } from '../helpers/raw-http';

let server: TestServer;
let alice: Key;

t.before(async () => {
  server = await startServer();
  alice = await server.keygen('alice');
});
t.teardown(() => server?.close());

function postRequest(text: string, extraHeaders = ''): string {
  const body = JSON.stringify({ text });
  return `POST /api/posts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${alice.key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extraHeaders}\r\n${body}`;
}

const HEALTHZ = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';

async function postTexts(): Promise<string[]> {
  const r = await server.get(`/api/users/${alice.user_id}/posts?limit=100`);
  return r.json.items.map((p: { text: string }) => p.text);
}

t.test('a write pipelined with a request behind it is refused before any state change', async (t) => {
  // uWS closes a connection whose next request arrives while the previous answer is pending, and
  // the pending one cannot be answered any more; perch starts a write only after the bytes that
  // came with it were parsed, so the refused write changes nothing.
  const r = await rawExchange(server.port, postRequest('pipelined') + HEALTHZ);
  t.same(r.responses, [], 'no answer');
  t.equal(r.rest, '');
  t.equal(r.closedByServer, true, 'the connection is closed');
  const bodyInTwoParts = postRequest('split body');
  const cut = bodyInTwoParts.length - 5;
  const late = await rawExchange(server.port, [bodyInTwoParts.slice(0, cut), bodyInTwoParts.slice(cut) + HEALTHZ], { pauseMs: 50 });
  t.same(late.responses, [], 'the same when the request behind comes with the end of the body');
  t.notOk((await postTexts()).some((x) => x === 'pipelined' || x === 'split body'), 'no post was created');
});

t.test('writes one after another on one connection are answered in order', async (t) => {
  const first = await rawExchange(server.port, postRequest('first of two'), { expect: 1 });
  t.equal(first.responses[0].status, 201);
  const both = await rawExchange(server.port, HEALTHZ + HEALTHZ, { expect: 2 });
  t.same(both.responses.map((x) => [x.status, x.body]), [[200, '{"status":"ok"}'], [200, '{"status":"ok"}']], 'synchronous answers pipeline fine');
  t.ok((await postTexts()).includes('first of two'));
});

t.test('two Content-Length headers: 400, connection closed, nothing stored', async (t) => {
  const body = JSON.stringify({ text: 'conflict' });
  const request = `POST /api/posts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${alice.key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nContent-Length: 5\r\n\r\n${body}`;
  const r = await rawExchange(server.port, request, { expect: 1 });
  t.equal(r.responses[0]?.status, 400);
  t.equal(r.responses[0]?.headers.connection, 'close');
  t.same(JSON.parse(r.responses[0].body), {
    error: 'invalid_request',
    message: 'The request has more than one Content-Length header.',
    details: [{ path: '', message: 'the request has more than one Content-Length header' }],
  });
  // The same on a path perch has no route for, and with equal values.
  const unrouted = await rawExchange(server.port, 'POST /no/such/path HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}', { expect: 1 });
  t.equal(unrouted.responses[0]?.status, 400);
  t.notOk((await postTexts()).includes('conflict'));
});

t.test('a smuggled request behind conflicting Content-Lengths is never run', async (t) => {
  // A proxy that believed the second header would forward this as one request; uWS frames it by
  // the first (0), so the rest is a second request. The first is refused, and the second is
  // parsed while that refusal is pending, which makes uWS close the connection without running it.
  const smuggled = postRequest('smuggled');
  const request = `POST /api/posts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${alice.key}\r\nContent-Type: application/json\r\nContent-Length: 0\r\nContent-Length: ${smuggled.length}\r\n\r\n${smuggled}`;
  const r = await rawExchange(server.port, request);
  t.equal(r.closedByServer, true);
  t.ok(r.responses.every((x) => x.status === 400), `only a refusal, if anything: ${r.responses.map((x) => x.status)}`);
  t.notOk((await postTexts()).includes('smuggled'), 'the smuggled post was not created');
});

t.test('the redirect path refuses the same framing, and a request smuggled behind it is never run', async (t) => {
  const created = await server.post('/api/shorten', { key: alice.key, json: { url: 'https://example.org/framed' } });
  t.equal(created.status, 201);
  const code: string = created.json.short_code;
  const smuggled = postRequest('smuggled behind a redirect');
  for (const method of ['GET', 'HEAD']) {
    const request = `${method} /${code} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: ${smuggled.length}\r\n\r\n${smuggled}`;
    const r = await rawExchange(server.port, request);
    t.equal(r.closedByServer, true, method);
    t.ok(r.responses.every((x) => x.status === 400), `${method}: only a refusal, if anything: ${r.responses.map((x) => x.status)}`);
  }
  const te = await rawExchange(server.port, `GET /${code} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n`, { expect: 1 });
  t.equal(te.responses[0]?.status, 400);
  t.equal(te.responses[0]?.headers.connection, 'close');
  t.same(JSON.parse(te.responses[0].body).message, 'Transfer-Encoding must be exactly "chunked".');
  t.notOk((await postTexts()).includes('smuggled behind a redirect'), 'the smuggled post was not created');
  // A plain Content-Length on a redirect is fine.
  const plain = await rawExchange(server.port, `GET /${code} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n`, { expect: 1 });
  t.equal(plain.responses[0]?.status, 302);
  t.equal(plain.responses[0]?.headers.location, 'https://example.org/framed');
});

t.test('Transfer-Encoding other than exactly chunked: 400, connection closed, nothing stored', async (t) => {
  const body = JSON.stringify({ text: 'encoded' });
  const chunked = `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
  const head = `POST /api/posts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${alice.key}\r\nContent-Type: application/json\r\n`;
  for (const te of ['Transfer-Encoding: gzip, chunked', 'Transfer-Encoding: chunked, gzip', 'Transfer-Encoding: gzip', 'Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked']) {
    const r = await rawExchange(server.port, `${head}${te}\r\n\r\n${chunked}`, { expect: 1 });
    t.equal(r.responses[0]?.status, 400, te);
    t.equal(r.responses[0]?.headers.connection, 'close');
    t.equal(JSON.parse(r.responses[0].body).error, 'invalid_request');
  }
  t.notOk((await postTexts()).includes('encoded'));
  const plain = await rawExchange(server.port, `${head}Transfer-Encoding: Chunked\r\n\r\n${chunked}`, { expect: 1 });
  t.equal(plain.responses[0]?.status, 201, 'chunked alone (any case) is fine');
  t.ok((await postTexts()).includes('encoded'));
});

t.test('a request target over 8 KiB: 414 on every route', async (t) => {
  const long = (path: string, total: number) => `${path}?pad=${'a'.repeat(total - path.length - 5)}`;
  for (const path of ['/healthz', '/api/timeline', '/no/such/path']) {
    const target = long(path, 8193);
    t.equal(target.length, 8193);
    const r = await rawExchange(server.port, `GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`, { expect: 1 });
    t.equal(r.responses[0]?.status, 414, path);
    t.same(JSON.parse(r.responses[0].body), { error: 'uri_too_long', message: 'The request URL is limited to 8192 bytes.' });
  }
  const atLimit = await rawExchange(server.port, `GET ${long('/healthz', 8192)} HTTP/1.1\r\nHost: x\r\n\r\n`, { expect: 1 });
  t.equal(atLimit.responses[0]?.status, 200, '8192 bytes is fine');
});

t.test('known methods perch does not serve: 405 with Allow, or 404', async (t) => {
  for (const method of ['OPTIONS', 'TRACE', 'CONNECT']) {
    const r = await rawExchange(server.port, `${method} /healthz HTTP/1.1\r\nHost: x\r\n\r\n`, { expect: 1 });
    t.equal(r.responses[0]?.status, 405, method);
    t.equal(r.responses[0]?.headers.allow, 'GET, HEAD');
  }
  const unknown = await rawExchange(server.port, 'TRACE /no/such/path HTTP/1.1\r\nHost: x\r\n\r\n', { expect: 1 });
  t.equal(unknown.responses[0]?.status, 404);
});

t.test('what uWebSockets.js v20.30 does before perch sees the request (documented limits)', async (t) => {
  let manyHeaders = '';
  for (let i = 0; i < 48; i++) manyHeaders += `X-Header-${i}: v\r\n`;
  const head5k = `GET /healthz?pad=${'a'.repeat(5000)} HTTP/1.1\r\nHost: x\r\n\r\n`;
  const cases: Array<[string, string | string[], number?]> = [
    // No answer at all: the connection stays open until the idle timeout closes it.
    ['HTTP/1.0', 'GET /healthz HTTP/1.0\r\nHost: x\r\n\r\n'],
    ['HTTP/1.1 without Host', 'GET /healthz HTTP/1.1\r\n\r\n'],
    ['49 headers', `GET /healthz HTTP/1.1\r\nHost: x\r\n${manyHeaders}\r\n`],
    ['a malformed request line', 'GARBAGE\r\n\r\n'],
    ['a request line without a version', 'GET /healthz\r\nHost: x\r\n\r\n'],
    // Closed at once without an answer.
    ['an unknown method', 'BREW /healthz HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a lower-case method', 'get /healthz HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['Content-Length and Transfer-Encoding', 'POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
    ['a Content-Length that is not a number', 'POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 4x\r\n\r\nabcd'],
    // (Read at once, the same head is answered: the pause must outlast any delay of the server's
    // read on a starved machine, so it is a second, not a few milliseconds.)
    ['a request head over 4 KiB arriving in two reads', [head5k.slice(0, 2500), head5k.slice(2500)], 1000],
    // An answer that is pending when the next request arrives is never sent.
    ['a read answered asynchronously, with a request behind it', 'GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n' + HEALTHZ],
  ];
  const results = await Promise.all(cases.map(([, data, pauseMs]) => rawExchange(server.port, data, { pauseMs })));
  cases.forEach(([label], i) => {
    t.same(results[i], { responses: [], rest: '', closedByServer: true }, `${label}: closed without a byte`);
  });
});
