// Edits and deletions racing each other and the redirects of another thread. A PATCH that loses
// to a DELETE answers 404, never 500; and once a DELETE has answered 204, no thread redirects the
// code any more, even when another thread was filling its cache from SQLite at that moment.
import t from 'tap';
import { onFirstUse, pinnedThreadsTest } from '../helpers/command-test';
import { startServer, type Key, type TestServer } from '../helpers/server';
import { create } from './links-helpers';

let server: TestServer;
let alice: Key;

const loose = {
  // Hundreds of links in seconds: room for them in the limits and the spam detector.
  limits: { shorten: { capacity: 100_000, refill_per_second: 1000, burst_per_second: 10_000, daily_quota: 100_000 }, redirect: { capacity: 1_000_000, refill_per_second: 1_000_000 } },
  anomaly: { max_links: 100_000, max_same_domain: 100_000 },
  // A long TTL, so that a stale entry would be served for the rest of the test.
  links: { cache_ttl_seconds: 3600 },
};

/**
 * The server of every test here, started by the first: two threads whatever the pass (the races
 * are between threads), so the tests run in the one-thread pass only.
 */
const ready = onFirstUse(async () => {
  server = await startServer({ threads: 2, config: loose });
  alice = await server.keygen('alice');
});
t.teardown(() => server?.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function status(code: string, close: boolean): Promise<number> {
  const r = await fetch(`${server.url}/${code}`, { redirect: 'manual', headers: close ? { connection: 'close' } : {} });
  await r.arrayBuffer();
  return r.status;
}

pinnedThreadsTest('PATCH racing DELETE of the same link answers 200 or 404, never 500', async (t) => {
  await ready();
  const outcomes = new Map<string, number>();
  for (let i = 0; i < 50; i++) {
    const code = await create(server, alice, `https://example.com/race-${i}`);
    const [patch, del] = await Promise.all([
      server.request('PATCH', `/api/links/${code}`, { key: alice.key, json: { url: `https://example.com/race-${i}-b` } }),
      server.request('DELETE', `/api/links/${code}`, { key: alice.key }),
    ]);
    const key = `PATCH ${patch.status}, DELETE ${del.status}`;
    outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    if (patch.status === 404) t.equal(patch.json.error, 'not_found');
  }
  for (const key of outcomes.keys()) t.match(key, /^PATCH (200|404), DELETE 204$/, key);
});

pinnedThreadsTest('PATCHes of different fields made at once all stand, on either thread', async (t) => {
  await ready();
  let lost = 0;
  for (let i = 0; i < 30; i++) {
    const code = await create(server, alice, `https://example.com/fields-${i}`);
    const expires = new Date(Date.now() + 86_400_000 + i).toISOString();
    const answers = await Promise.all([
      server.request('PATCH', `/api/links/${code}`, { key: alice.key, json: { url: `https://example.com/fields-${i}-b` } }),
      server.request('PATCH', `/api/links/${code}`, { key: alice.key, json: { expires_at: expires } }),
      server.request('PATCH', `/api/links/${code}`, { key: alice.key, json: { password: 'pass word' } }),
    ]);
    t.same(answers.map((a) => a.status), [200, 200, 200], `link ${i}: three 200s`);
    // Each answer shows its own change, whatever the others did.
    t.equal(answers[0].json.url, `https://example.com/fields-${i}-b`);
    t.equal(answers[1].json.expires_at, expires);
    t.equal(answers[2].json.password_protected, true);
    const after = await server.get(`/api/links/${code}`, { key: alice.key });
    const kept = after.json.url === `https://example.com/fields-${i}-b` && after.json.expires_at === expires && after.json.password_protected === true;
    if (!kept) {
      lost++;
      t.fail(`link ${i}: ${JSON.stringify([after.json.url, after.json.expires_at, after.json.password_protected])}`);
    }
  }
  t.equal(lost, 0, 'no edit undone by another');
});

pinnedThreadsTest('after DELETE answers 204, no thread redirects the code, though they were reading it meanwhile', async (t) => {
  await ready();
  const links = 200;
  const stale: string[] = [];
  for (let i = 0; i < links; i++) {
    const code = await create(server, alice, `https://example.com/hot-${i}`);
    // Redirects of the code on both threads, while it is edited and then deleted.
    let stop = false;
    const readers = Array.from({ length: 8 }, async (_, k) => {
      while (!stop) await status(code, k % 2 === 1);
    });
    await sleep(2);
    await server.request('PATCH', `/api/links/${code}`, { key: alice.key, json: { url: `https://example.com/hot-${i}-b` } });
    await sleep(i % 4);
    const del = await server.request('DELETE', `/api/links/${code}`, { key: alice.key });
    t.equal(del.status, 204);
    stop = true;
    await Promise.all(readers);
    // Every redirect after the 204, over new and kept-alive connections (both threads).
    const after = await Promise.all(Array.from({ length: 8 }, (_, k) => status(code, k % 2 === 1)));
    if (after.some((s) => s !== 404)) stale.push(`${code}: ${after.join(' ')}`);
  }
  t.same(stale, [], `every one of ${links} deleted links answers 404 on every thread`);
});
