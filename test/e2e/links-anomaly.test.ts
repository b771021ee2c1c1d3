// The anomaly detector: flags accounts off the request path, throttles them with 429 before the
// numeric limits, and `perch flags list|clear` shows and lifts flags.
import t from 'tap';
import { startServer, testThreads, type Key, type TestServer } from '../helpers/server';
import { create, hasLimitHeaders, shorten, waitFor } from './links-helpers';

let server: TestServer;

t.before(async () => {
  server = await startServer({
    threads: testThreads(),
    config: {
      limits: { shorten: { capacity: 500, refill_per_second: 100, burst_per_second: 500, daily_quota: 5000 } },
      anomaly: { max_links: 8, window_seconds: 10, max_same_domain: 4, domain_window_seconds: 60, cooloff_seconds: 600 },
    },
  });
});
t.teardown(() => server?.close());

async function flagged(): Promise<Array<{ handle: string; reason: string; active: boolean }>> {
  const r = await server.cli(['flags', 'list', '--json']);
  if (r.code !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

async function waitFlagged(handle: string) {
  return waitFor(`@${handle} to be flagged`, async () => (await flagged()).find((f) => f.handle === handle));
}

t.test('many links within seconds: flagged, throttled with 429, then cleared by the CLI', async (t) => {
  const spammer: Key = await server.keygen('spammer');
  const bystander: Key = await server.keygen('bystander');
  for (let i = 0; i < 8; i++) await create(server, spammer, `https://site${i}.example/page`);
  const flag = await waitFlagged('spammer');
  t.match(flag.reason, /8 links within 10 s/);
  t.equal(flag.active, true);

  const r = await shorten(server, spammer, { url: 'https://fine.example/' });
  t.equal(r.status, 429);
  t.equal(r.json.error, 'rate_limited');
  t.equal(r.json.limit, 'anomaly', 'the body names the limit: the detector, not a bucket');
  t.type(r.json.message, 'string');
  t.ok(r.json.retry_after_seconds > 500 && r.json.retry_after_seconds <= 600, `retry after the cool-off: ${r.json.retry_after_seconds}`);
  t.equal(r.headers.get('retry-after'), String(r.json.retry_after_seconds));
  t.ok(hasLimitHeaders(r));
  t.equal(r.headers.get('x-ratelimit-remaining'), '0');
  t.equal((await shorten(server, bystander, { url: 'https://fine.example/' })).status, 201, 'other accounts are not affected');
  // In a batch, each entry is answered as its creation alone would be: 429, a malformed one too.
  const bulk = await server.post('/api/links/bulk', { key: spammer.key, json: { links: [{ url: 'https://fine.example/a' }, { url: 'not a url' }] } });
  t.equal(bulk.status, 200);
  t.same(bulk.json.items.map((i: { index: number; status: number; error?: { limit?: string } }) => [i.index, i.status, i.error?.limit]), [[0, 429, 'anomaly'], [1, 429, 'anomaly']]);

  const list = await server.cli(['flags', 'list']);
  t.match(list.stdout, /@spammer/);
  const cleared = await server.cli(['flags', 'clear', 'spammer']);
  t.equal(cleared.code, 0, cleared.stderr);
  t.match(cleared.stdout, /cleared/);
  t.equal((await shorten(server, spammer, { url: 'https://fine.example/' })).status, 201, 'throttling lifted');
  t.notOk((await flagged()).some((f) => f.handle === 'spammer'), 'no longer listed');
  await new Promise((r) => setTimeout(r, 1500));
  t.equal((await shorten(server, spammer, { url: 'https://fine.example/2' })).status, 201, 'the old burst does not flag it again');
  const all = JSON.parse((await server.cli(['flags', 'list', '--all', '--json'])).stdout);
  t.ok(all.some((f: { handle: string; cleared_at: string | null }) => f.handle === 'spammer' && f.cleared_at), '--all shows cleared flags');
  t.equal((await server.cli(['flags', 'clear', 'nobody'])).code, 2, 'an unknown user is a bad value');
});

t.test('many links to one registrable domain within a minute', async (t) => {
  const phisher: Key = await server.keygen('phisher');
  for (const host of ['login.bank.co.uk', 'secure.bank.co.uk', 'bank.co.uk', 'www.bank.co.uk']) {
    await create(server, phisher, `https://${host}/verify`);
  }
  const flag = await waitFlagged('phisher');
  t.match(flag.reason, /4 links to bank\.co\.uk/);
  t.equal((await shorten(server, phisher, { url: 'https://elsewhere.example/' })).status, 429);
});

t.test('links spread over domains and time do not flag', async (t) => {
  const normal: Key = await server.keygen('normal');
  for (let i = 0; i < 3; i++) await create(server, normal, `https://shop${i}.example.com/item`);
  await new Promise((r) => setTimeout(r, 2000));
  t.notOk((await flagged()).some((f) => f.handle === 'normal'));
  t.equal((await shorten(server, normal, { url: 'https://example.org' })).status, 201);
});
