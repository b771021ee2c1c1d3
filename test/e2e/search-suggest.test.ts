// GET /api/suggest over HTTP: every answered search is counted (normalised), suggestions appear
// within the contract's minute (bounded polls), rank by decayed volume so that a recently hot query
// overtakes an old popular one (a half-life of 3.6 s here), and bad prefixes and limits are 400.
import t from 'tap';
import { startServer, type Key, type TestServer } from '../helpers/server';
import { waitFor } from './links-helpers';

const LOOSE = { recent: { capacity: 100_000, refill_per_second: 1000 }, relevance: { capacity: 100_000, refill_per_second: 1000 } };

async function searchTimes(server: TestServer, key: Key, q: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await server.get('/api/search?q=' + encodeURIComponent(q), { key: key.key });
    if (r.status !== 200) throw new Error(`search failed: ${r.status} ${r.text}`);
  }
}

type Suggestion = { query: string; volume: number };

async function suggest(server: TestServer, prefix: string, limit?: number): Promise<Suggestion[]> {
  const r = await server.get(`/api/suggest?prefix=${encodeURIComponent(prefix)}${limit === undefined ? '' : `&limit=${limit}`}`);
  if (r.status !== 200) throw new Error(`suggest failed: ${r.status} ${r.text}`);
  return r.json.suggestions as Suggestion[];
}

t.test('queries are counted normalised and suggested by volume; public; bad prefixes and limits are 400', async (t) => {
  const server = await startServer({ config: { limits: { search: LOOSE } } });
  t.teardown(() => server.close());
  const alice = await server.keygen('alice');
  await searchTimes(server, alice, 'Café au lait', 1);
  await searchTimes(server, alice, '  café   AU LAIT\t', 1);
  await searchTimes(server, alice, 'ｃａｆé au lait', 1);
  await searchTimes(server, alice, 'cafe crème', 2);
  await searchTimes(server, alice, 'camera', 1);
  t.equal((await server.get('/api/search?sort=bogus&q=camera', { key: alice.key })).status, 400, 'a refused search counts for nothing');
  const got = await waitFor('the counts to arrive', async () => {
    const s = await suggest(server, 'CA');
    return s.length === 3 ? s : undefined;
  }, 60_000);
  t.same(got, [
    { query: 'café au lait', volume: 3 },
    { query: 'cafe crème', volume: 2 },
    { query: 'camera', volume: 1 },
  ], 'normalised, by volume');
  t.same(await suggest(server, '  Café  au '), [{ query: 'café au lait', volume: 3 }], 'the prefix is normalised like queries');
  t.same(await suggest(server, 'ca', 1), [{ query: 'café au lait', volume: 3 }], 'limit');
  t.same(await suggest(server, 'cafe'), [{ query: 'cafe crème', volume: 2 }], 'a prefix matches characters as typed, accents included');
  t.same(await suggest(server, 'zz'), []);
  t.same(await suggest(server, 'x'.repeat(100)), [], '100 characters is allowed');

  const bad: Array<[string, { path: string; message: string }[]]> = [
    ['', [{ path: 'prefix', message: 'is required' }]],
    ['prefix=', [{ path: 'prefix', message: 'must not be empty (after normalisation)' }]],
    ['prefix=%20%E3%80%80', [{ path: 'prefix', message: 'must not be empty (after normalisation)' }]],
    ['prefix=' + 'x'.repeat(101), [{ path: 'prefix', message: 'is 101 characters long; the limit is 100' }]],
    ['prefix=ca&limit=0', [{ path: 'limit', message: 'must be an integer from 1 to 20' }]],
    ['prefix=ca&limit=21', [{ path: 'limit', message: 'must be an integer from 1 to 20' }]],
    ['prefix=ca&limit=ten', [{ path: 'limit', message: 'must be an integer from 1 to 20' }]],
    ['prefix=ca&limit=-1', [{ path: 'limit', message: 'must be an integer from 1 to 20' }]],
  ];
  for (const [query, details] of bad) {
    const r = await server.get('/api/suggest?' + query);
    t.equal(r.status, 400, query);
    t.equal(r.json.error, 'invalid_request');
    t.same(r.json.details, details, query);
  }
  t.equal((await server.get('/api/suggest?prefix=ca&limit=20')).status, 200);
});

t.test('decay: a recently hot query overtakes an old popular one', async (t) => {
  // A half-life of 3.6 s, so that hours of history fit in seconds.
  const server = await startServer({ config: { limits: { search: LOOSE }, suggest: { half_life_hours: 0.001 } } });
  t.teardown(() => server.close());
  const alice = await server.keygen('alice');
  await searchTimes(server, alice, 'old popular', 40);
  // Counted: the popular query leads (alone).
  const first = await waitFor('the popular query to be counted', async () => {
    const s = await suggest(server, 'old');
    return s.length > 0 ? s : undefined;
  }, 60_000);
  t.equal(first[0].query, 'old popular');
  // Decayed: two half-lives later it has lost three quarters of its volume.
  const decayed = await waitFor('the popular query to decay', async () => {
    const s = await suggest(server, 'old');
    return s[0] && s[0].volume <= 10 ? s[0].volume : undefined;
  }, 30_000);
  t.ok(decayed >= 1 && decayed <= 10, `decayed to ${decayed}`);
  // Half as many searches, but recent: they outweigh the popular query's history.
  await searchTimes(server, alice, 'old hot', 20);
  // The searches are counted in batches by background work: until the last batch is in, the hot
  // query may lead by its exact score with the same rounded volume. Wait for it to lead on both.
  const overtaken = await waitFor('the hot query to lead', async () => {
    const s = await suggest(server, 'old');
    const hot = s.find((x) => x.query === 'old hot');
    const popular = s.find((x) => x.query === 'old popular');
    return s[0]?.query === 'old hot' && hot && popular && hot.volume > popular.volume ? { hot, popular, s } : undefined;
  }, 60_000);
  t.ok(overtaken.hot.volume > overtaken.popular.volume, `hot ${overtaken.hot.volume} > popular ${overtaken.popular.volume}`);
  t.same(overtaken.s.map((x) => x.query), ['old hot', 'old popular'], 'the old popular query is still suggested, below');
});
