// The evenly paced load of perch bench (bench/paced-load.ts): framing responses by their
// Content-Length, the schedule of due requests, and a run against a real local HTTP server.
import t from 'tap';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ResponseFramer, dueBy, pacedLoad } from '../../bench/paced-load';

const CREATED = 'HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"id":"42"}';
const LIMITED = 'HTTP/1.1 429 Too Many Requests\r\ncontent-length: 0\r\nRetry-After: 1\r\n\r\n';

t.test('responses are framed by their Content-Length, however the bytes are cut', async (t) => {
  const stream = Buffer.from(CREATED + LIMITED + CREATED);
  t.same(new ResponseFramer().push(stream), [201, 429, 201], 'three responses in one chunk');
  for (let cut = 1; cut < stream.length; cut++) {
    const framer = new ResponseFramer();
    const got = [...framer.push(stream.subarray(0, cut)), ...framer.push(stream.subarray(cut))];
    if (got.join() !== '201,429,201') t.fail(`cut at byte ${cut}: ${got.join()}`);
  }
  const framer = new ResponseFramer();
  const got: number[] = [];
  for (let i = 0; i < stream.length; i++) got.push(...framer.push(stream.subarray(i, i + 1)));
  t.same(got, [201, 429, 201], 'one byte at a time');
});

t.test('a response without a Content-Length, or not HTTP/1.1, is refused rather than miscounted', async (t) => {
  t.throws(() => new ResponseFramer().push(Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n')), /Content-Length/);
  t.throws(() => new ResponseFramer().push(Buffer.from('garbage\r\n\r\n')), /Content-Length/);
});

t.test('requests fall due evenly: the first at once, then one every 1/rate seconds', async (t) => {
  t.equal(dueBy(0, 1000), 1, 'the first at the start');
  t.equal(dueBy(0.999, 1000), 1);
  t.equal(dueBy(1, 1000), 2);
  t.equal(dueBy(999.5, 1000), 1000, 'a thousand in the first second');
  t.equal(dueBy(250, 200), 51, 'at 200 a second, one every 5 ms');
});

interface Seen {
  auth: string[];
  bodies: string[];
}

async function listen(handler: (req: IncomingMessage, body: string, n: number) => [number, string]): Promise<{ server: Server; url: string; seen: Seen }> {
  const seen: Seen = { auth: [], bodies: [] };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d));
    req.on('end', () => {
      seen.auth.push(String(req.headers.authorization));
      seen.bodies.push(body);
      const [status, out] = handler(req, body, seen.bodies.length);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
      res.end(out);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

t.test('a run sends rate x seconds requests, each connection its own, and counts every answer by class', async (t) => {
  // Every fifth request is refused: counted as a 4xx, not as a request without an answer.
  const { server, url, seen } = await listen((_req, _body, n) => (n % 5 === 0 ? [429, '{"error":"rate_limited"}'] : [201, '{"id":"1"}']));
  t.teardown(() => server.close());
  const summary = await pacedLoad({
    url,
    rate: 200,
    seconds: 0.5,
    connections: 4,
    request: (i) => ({ method: 'POST', path: '/api/posts', headers: { authorization: `Bearer key${i}` }, body: `{"text":"from ${i}"}` }),
  });
  t.equal(summary.requests, 100, '200 a second for half a second');
  t.equal(seen.bodies.length, 100, 'the server saw as many');
  t.equal(summary.status_2xx, 80);
  t.equal(summary.status_4xx, 20);
  t.equal(summary.no_answer, 0);
  t.ok(summary.rps > 0 && summary.p50_ms > 0 && summary.p99_ms >= summary.p50_ms, 'a rate and latencies');
  for (let i = 0; i < seen.bodies.length; i++) {
    const n = /^Bearer key(\d)$/.exec(seen.auth[i])?.[1];
    if (n === undefined || seen.bodies[i] !== `{"text":"from ${n}"}`) t.fail(`request ${i}: ${seen.auth[i]} ${seen.bodies[i]}`);
  }
  t.same(new Set(seen.auth).size, 4, 'every connection sent its own key');
});

t.test('a server that drops its connections ends the run, with the unanswered requests counted', async (t) => {
  const server = createServer((req) => req.socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const summary = await pacedLoad({ url, rate: 100, seconds: 0.2, connections: 3, request: () => ({ method: 'GET', path: '/', headers: {} }) });
  t.equal(summary.requests, 0, 'no answer came');
  t.equal(summary.no_answer, 20, 'all twenty due requests are counted as unanswered');
});

t.test('a server that is not there is an error, not a run of zero requests', async (t) => {
  const { server, url } = await listen(() => [200, '']);
  await new Promise((resolve) => server.close(resolve));
  await t.rejects(pacedLoad({ url, rate: 100, seconds: 0.1, connections: 2, request: () => ({ method: 'GET', path: '/', headers: {} }) }), /could not connect/);
});
