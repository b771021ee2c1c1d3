// Edits and deletions reach every HTTP thread at once, well inside the cache TTL.
import t from 'tap';
import { onFirstUse, pinnedThreadsTest } from '../helpers/command-test';
import { startServer, type Key, type TestServer } from '../helpers/server';
import { create } from './links-helpers';

let server: TestServer;
let alice: Key;
/**
 * The server of every test here, started by the first: two threads whatever the pass, so the
 * tests run in the one-thread pass only, and the two-thread pass starts no server for them.
 */
const ready = onFirstUse(async () => {
  // A long TTL, so that only invalidation (never expiry of cache entries) can explain a change.
  server = await startServer({ threads: 2, config: { links: { cache_ttl_seconds: 3600 } } });
  alice = await server.keygen('alice');
});
t.teardown(() => server?.close());

/** Many redirects over fresh connections and keep-alive ones, so both threads answer. */
async function locations(code: string, n = 120): Promise<Set<string | null>> {
  const seen = new Set<string | null>();
  const batch = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      fetch(`${server.url}/${code}`, { redirect: 'manual', headers: i % 2 ? { connection: 'close' } : {} }).then(async (r) => {
        await r.arrayBuffer();
        return r.status === 302 ? r.headers.get('location') : `status ${r.status}`;
      }),
    ),
  );
  for (const l of batch) seen.add(l);
  return seen;
}

pinnedThreadsTest('PATCH is visible to redirects on every thread without waiting for the TTL', async (t) => {
  await ready();
  const code = await create(server, alice, 'https://example.com/v0');
  t.same([...(await locations(code))], ['https://example.com/v0'], 'warm the caches of both threads');
  for (let v = 1; v <= 5; v++) {
    const r = await server.request('PATCH', `/api/links/${code}`, { key: alice.key, json: { url: `https://example.com/v${v}` } });
    t.equal(r.status, 200);
    t.same([...(await locations(code))], [`https://example.com/v${v}`], `after edit ${v} every redirect serves the new target`);
  }
});

pinnedThreadsTest('expiry set by PATCH is visible on every thread at once', async (t) => {
  await ready();
  const code = await create(server, alice, 'https://example.com/e');
  await locations(code);
  // An expiry far enough ahead that the PATCH is answered before it, on a starved machine too.
  const expires = new Date(Date.now() + 2000).toISOString();
  t.equal((await server.request('PATCH', `/api/links/${code}`, { key: alice.key, json: { expires_at: expires } })).status, 200);
  await new Promise((r) => setTimeout(r, Date.parse(expires) - Date.now() + 100));
  t.same([...(await locations(code, 60))], ['status 410']);
});

pinnedThreadsTest('DELETE is visible on every thread at once', async (t) => {
  await ready();
  const code = await create(server, alice, 'https://example.com/del');
  t.same([...(await locations(code))], ['https://example.com/del']);
  t.equal((await server.request('DELETE', `/api/links/${code}`, { key: alice.key })).status, 204);
  t.same([...(await locations(code))], ['status 404']);
});
