// What an operator sees over HTTP and in the log: the public origin, readiness, CORS, trusted
// proxy ranges, the 429's limit, metrics, the access log and the human log format.
import t from 'tap';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import WebSocket from 'ws';
import { VERSION } from '../../src/version';
import { PERCH, cleanEnv, startServer, tempDataDir, testThreads, untraced, type TestServer } from '../helpers/server';
import { create, shorten } from './links-helpers';

t.test('public_origin not set: short URLs and the own-origin guard follow the port really taken', async (t) => {
  const server = await startServer();
  t.teardown(() => server.close());
  const alice = await server.keygen('alice');
  const listening = JSON.parse(server.logs.find((l) => l.includes('"msg":"listening"'))!);
  t.equal(listening.public_origin, `http://localhost:${server.port}`, 'the listening notice says which origin');
  const r = await shorten(server, alice, { url: 'https://example.com/a' });
  t.equal(r.status, 201);
  t.equal(r.json.short_url, `http://localhost:${server.port}/${r.json.short_code}`);
  const follow = await fetch(r.json.short_url, { redirect: 'manual' });
  t.equal(follow.status, 302, 'the short URL leads to this server');
  t.equal(follow.headers.get('location'), 'https://example.com/a');
  const self = await shorten(server, alice, { url: `http://localhost:${server.port}/${r.json.short_code}` });
  t.equal(self.status, 400, 'a link to the real origin is refused');
  t.same(self.json.details, [{ path: 'url', message: 'must not point at this service' }]);
  t.notOk(server.logs.some((l) => l.includes('public_origin does not lead')), 'no warning');
});

t.test('public_origin set but not leading here: a warning at start-up, and it is used as set', async (t) => {
  const server = await startServer({ config: { server: { public_origin: 'http://localhost:1' } } });
  t.teardown(() => server.close());
  const warning = server.logs.map((l) => JSON.parse(l)).find((l) => l.level === 'warn' && /public_origin/.test(l.msg));
  t.ok(warning, 'warned');
  t.equal(warning.msg, `server.public_origin does not lead to this server: it names port 1, but perch listens on 127.0.0.1:${server.port}; short URLs will not work. Set it to the address clients use, or to "" to derive it`);
  t.equal(warning.public_origin, 'http://localhost:1');
  const k = await server.keygen('bob');
  t.match((await shorten(server, k, { url: 'https://example.com/' })).json.short_url, /^http:\/\/localhost:1\/\w+$/);

  const proxied = await startServer({ config: { server: { public_origin: 'https://short.example' } } });
  t.teardown(() => proxied.close());
  t.notOk(proxied.logs.some((l) => /"level":"warn"/.test(l)), 'an origin naming a proxy is not second-guessed');
  const k2 = await proxied.keygen('carol');
  t.match((await shorten(proxied, k2, { url: 'https://example.com/' })).json.short_url, /^https:\/\/short\.example\/\w+$/);
  t.equal((await shorten(proxied, k2, { url: 'https://short.example/x' })).status, 400, 'the guard follows the configured origin');
});

let server: TestServer;
t.before(async () => {
  server = await startServer({
    config: {
      server: { cors_origins: ['https://app.example'], trusted_proxies: ['127.0.0.0/8'] },
      limits: { redirect: { capacity: 2, refill_per_second: 0.001 } },
      log: { access: true },
    },
  });
});
t.teardown(() => server.close());

t.test('GET /readyz: ready with the version while the stores answer', async (t) => {
  const r = await server.get('/readyz');
  t.equal(r.status, 200);
  t.equal(r.headers.get('content-type'), 'application/json');
  t.same(r.json, { status: 'ready', version: VERSION });
  t.equal((await server.request('HEAD', '/readyz')).status, 200);
  t.equal((await server.request('POST', '/readyz')).status, 405);
});

t.test('CORS: preflights on /api/… answer 204 without a key; allowed origins get the headers', async (t) => {
  const pre = await server.request('OPTIONS', '/api/shorten', { headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } });
  t.equal(pre.status, 204);
  t.equal(pre.text, '');
  t.equal(pre.headers.get('access-control-allow-origin'), 'https://app.example');
  t.equal(pre.headers.get('vary'), 'Origin');
  t.equal(pre.headers.get('access-control-allow-methods'), 'GET, HEAD, POST, PUT, PATCH, DELETE');
  t.equal(pre.headers.get('access-control-allow-headers'), 'Authorization, X-Api-Key, Content-Type, If-None-Match');
  t.equal(pre.headers.get('access-control-max-age'), '600');
  for (const path of ['/api/posts/123', '/api/links/abc', '/api/no-such-thing', '/api']) {
    const r = await server.request('OPTIONS', path, { headers: { origin: 'https://app.example' } });
    t.equal(r.status, 204, `OPTIONS ${path}`);
    t.equal(r.headers.get('access-control-allow-origin'), 'https://app.example');
  }
  const stranger = await server.request('OPTIONS', '/api/shorten', { headers: { origin: 'https://evil.example' } });
  t.equal(stranger.status, 204, 'a preflight of another origin is answered too...');
  t.equal(stranger.headers.get('access-control-allow-origin'), null, '...without allowing anything');
  t.equal(stranger.headers.get('access-control-allow-methods'), null);
  t.equal(stranger.headers.get('vary'), 'Origin', 'the answer depends on the Origin all the same');
  t.equal((await server.request('OPTIONS', '/healthz')).status, 405, 'OPTIONS outside /api/ is no preflight');

  const alice = await server.keygen('alice');
  const created = await server.post('/api/shorten', { key: alice.key, json: { url: 'https://example.com/cors' }, headers: { origin: 'https://app.example' } });
  t.equal(created.status, 201);
  t.equal(created.headers.get('access-control-allow-origin'), 'https://app.example');
  t.equal(created.headers.get('vary'), 'Origin');
  t.match(created.headers.get('access-control-expose-headers'), /Location.*X-RateLimit-Remaining/);
  t.equal(created.headers.get('x-ratelimit-limit'), '5', 'the route\'s own headers are all there');
  const failed = await server.get('/api/me', { headers: { origin: 'https://app.example' } });
  t.equal(failed.status, 401);
  t.equal(failed.headers.get('access-control-allow-origin'), 'https://app.example', 'errors too, so a browser can read them');
  const other = await server.get('/api/me', { key: alice.key, headers: { origin: 'https://evil.example' } });
  t.equal(other.status, 200);
  t.equal(other.headers.get('access-control-allow-origin'), null);
  t.equal(other.headers.get('access-control-expose-headers'), null);
  t.equal(other.headers.get('vary'), 'Origin', 'another origin: only Vary, so a cache keeps the two apart');
  const plain = await server.get('/api/me', { key: alice.key });
  t.equal(plain.headers.get('access-control-allow-origin'), null, 'no Origin, no CORS headers...');
  t.equal(plain.headers.get('vary'), 'Origin', '...but Vary, for the same reason');
  const code = await create(server, alice, 'https://example.com/cors-redirect');
  const redirect = await server.get(`/${code}`);
  t.equal(redirect.status, 302);
  t.equal(redirect.headers.get('vary'), 'Origin', 'the redirect too');
  t.equal(redirect.headers.get('location'), 'https://example.com/cors-redirect');

  const closed = await startServer();
  t.teardown(() => closed.close());
  const none = await closed.request('OPTIONS', '/api/posts', { headers: { origin: 'https://app.example' } });
  t.equal(none.status, 204, 'default (no origins): a preflight is still 204, never 405 or 401');
  t.equal(none.headers.get('access-control-allow-origin'), null);
  t.equal(none.headers.get('vary'), null, 'CORS off: nothing depends on the Origin');
  t.equal((await closed.get('/api/me', { headers: { origin: 'https://app.example' } })).headers.get('vary'), null);
});

t.test('trusted_proxies takes CIDR ranges: the client behind a proxy in 127.0.0.0/8 is the X-Forwarded-For address', async (t) => {
  const alice = await server.keygen('xff');
  const code = await create(server, alice, 'https://example.com/xff');
  const from = (ip: string) => server.get(`/${code}`, { headers: { 'x-forwarded-for': `198.51.100.99, ${ip}` } });
  const first = [await from('203.0.113.1'), await from('203.0.113.1'), await from('203.0.113.1')];
  t.same(first.map((r) => r.status), [302, 302, 429], 'a bucket of 2 for 203.0.113.1');
  t.equal(first[2].json.limit, 'redirect', 'the 429 names the limit');
  t.equal((await from('203.0.113.2')).status, 302, 'another client behind the proxy has its own bucket');
  const six = [await from('2001:db8:5:5::1'), await from('2001:db8:5:5::2'), await from('2001:db8:5:5:ffff::9')];
  t.same(six.map((r) => r.status), [302, 302, 429], 'an IPv6 client has one bucket for its /64, whichever address it uses');
  t.equal((await from('2001:db8:5:6::1')).status, 302, 'the next /64 is another client');

  const untrusting = await startServer({ config: { limits: { redirect: { capacity: 2, refill_per_second: 0.001 } } } });
  t.teardown(() => untrusting.close());
  const k = await untrusting.keygen('u');
  const c = await create(untrusting, k, 'https://example.com/u');
  const statuses = [];
  for (const ip of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) statuses.push((await untrusting.get(`/${c}`, { headers: { 'x-forwarded-for': ip } })).status);
  t.same(statuses, [302, 302, 429], 'without trusted proxies the header is ignored: one bucket for the peer');
});

t.test('/metrics: process and Node.js metrics, build info, group commits as counters', async (t) => {
  const k = await server.keygen('poster');
  t.equal((await server.post('/api/posts', { key: k.key, json: { text: 'counted' } })).status, 201);
  const text = (await server.get('/metrics')).text;
  t.match(text, new RegExp(`^perch_build_info\\{version="${VERSION.replace(/\./g, '\\.')}"\\} 1$`, 'm'));
  t.match(text, /^# TYPE perch_group_commits_total counter$/m);
  t.match(text, /^# TYPE perch_group_commit_writes_total counter$/m);
  const commits = Number(/^perch_group_commits_total (\d+)$/m.exec(text)?.[1]);
  t.ok(commits >= 1, `commits ${commits}`);
  t.notMatch(text, /^perch_group_commits /m, 'no gauge of that name any more');
  for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'process_open_fds', 'process_start_time_seconds', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) {
    const lines = text.split('\n').filter((l) => l.startsWith(name + ' '));
    t.equal(lines.length, 1, `${name} once, from the supervisor`);
    t.ok(Number(lines[0]?.split(' ')[1]) >= 0, lines[0]);
  }
  const started = Number(/^process_start_time_seconds (\d+)/m.exec(text)![1]);
  t.ok(Math.abs(started - Date.now() / 1000) < 600, 'the start time of this process');
  t.match(text, /^nodejs_version_info\{version="v20\./m);
  t.match(text, /^perch_http_requests_total\{route="preflight",method="OPTIONS",status="204"\} \d+$/m, 'preflights are counted');
});

t.test('log.access: one line per answered request, with the client behind a trusted proxy', async (t) => {
  const before = server.logs.length;
  await server.get('/healthz');
  await server.get('/api/me?access_token=secret');
  await server.get('/nope/nope', { headers: { 'x-forwarded-for': '192.0.2.44' } });
  const order = ['/healthz', '/api/me', '/nope/nope'];
  // In the order of the requests: lines written by two HTTP threads may reach stdout in either order.
  const lines = (await waitForLines(server, before, 3)).sort((a, b) => order.indexOf(a.path as string) - order.indexOf(b.path as string));
  t.same(lines.map((l) => [l.msg, l.method, l.path, l.status, l.ip]), [
    ['request', 'GET', '/healthz', 200, '127.0.0.1'],
    ['request', 'GET', '/api/me', 401, '127.0.0.1'],
    ['request', 'GET', '/nope/nope', 404, '192.0.2.44'],
  ], 'the query string is never logged');
  for (const l of lines) t.ok(typeof l.ms === 'number' && l.ms >= 0, `ms ${l.ms}`);
});

t.test('log.access: WebSocket upgrades too, 101 or the refusal', async (t) => {
  const viewer = await server.keygen('wsviewer');
  const before = server.logs.length;
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/ws?access_token=${viewer.key}`);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  ws.close();
  const refused = new WebSocket(`${server.url.replace('http', 'ws')}/ws?access_token=nosuchkey`);
  const status = await new Promise<number>((resolve) => refused.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)));
  t.equal(status, 401);
  // By status (the upgrade, then the refusal): two connections may be served by two HTTP threads,
  // whose lines may reach stdout in either order.
  const lines = (await waitForLines(server, before, 2, ['/ws'])).sort((a, b) => (a.status as number) - (b.status as number));
  t.same(lines.map((l) => [l.method, l.path, l.status, l.ip]), [
    ['GET', '/ws', 101, '127.0.0.1'],
    ['GET', '/ws', 401, '127.0.0.1'],
  ], 'the key in the query string is never logged');
  t.notOk(server.logs.slice(before).some((l) => l.includes(viewer.key)), 'nor anywhere else');
});

async function waitForLines(s: TestServer, from: number, n: number, paths = ['/healthz', '/api/me', '/nope/nope']): Promise<Array<Record<string, unknown>>> {
  for (let i = 0; i < 100; i++) {
    // Lines of this test's requests (one of an earlier request may arrive late).
    const lines = s.logs.slice(from).map((l) => JSON.parse(l)).filter((l) => l.msg === 'request' && paths.includes(l.path));
    if (lines.length >= n) return lines;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('access lines did not arrive');
}

t.test('log.format human: one readable line per record (JSON is the default for a pipe)', async (t) => {
  t.ok(server.logs.every((l) => l.startsWith('{')), 'stdout is a pipe here: JSON lines');
  const dir = tempDataDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env = { ...cleanEnv(), PERCH_LOG_FORMAT: 'human', PERCH_LOG_ACCESS: 'true' };
  const command = untraced([process.execPath, PERCH, 'serve', '--port', '0', '--threads', String(testThreads()), '--data', dir], env);
  const proc = spawn(command[0], command.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  const kill = setTimeout(() => proc.kill('SIGKILL'), 30_000);
  t.teardown(() => clearTimeout(kill));
  let buffered = '';
  const port = await new Promise<number>((resolve, reject) => {
    proc.stdout.on('data', (d: Buffer) => {
      buffered += d.toString();
      const parts = buffered.split('\n');
      buffered = parts.pop()!;
      for (const line of parts) {
        lines.push(line);
        const m = /^\d\d:\d\d:\d\d\.\d{3} INFO  listening host=127\.0\.0\.1 port=(\d+) /.exec(line);
        if (m) resolve(Number(m[1]));
      }
    });
    void exited.then((code) => reject(new Error(`exited ${code}`)));
  });
  await fetch(`http://127.0.0.1:${port}/healthz`);
  proc.kill('SIGTERM');
  t.equal(await exited, 0);
  t.notOk(lines.some((l) => l.startsWith('{')), 'no JSON lines');
  t.ok(lines.some((l) => /^\d\d:\d\d:\d\d\.\d{3} INFO  (\[\d+\] )?request method=GET path=\/healthz status=200 ms=[\d.]+ ip=127\.0\.0\.1$/.test(l)), 'the access line, human');
  t.ok(lines.some((l) => /^\d\d:\d\d:\d\d\.\d{3} INFO  stopped$/.test(l)), 'the stopped notice');
  t.match(lines.find((l) => / INFO  listening /.test(l)), new RegExp(`public_origin=http://localhost:${port} version=${VERSION.replace(/\./g, '\\.')}$`));
});
