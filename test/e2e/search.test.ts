// GET /api/search over HTTP: matching rules, both orders and their cursors, visibility of new and
// deleted posts (bounded polls), hostile query text, bad input, the two tiers' limits, and
// `perch reindex` beside a running server.
import t from 'tap';
import { startServer, type Key, type Res, type TestServer } from '../helpers/server';
import { seededInts } from '../fixtures/random';
import { hasLimitHeaders, limitHeaders, waitFor } from './links-helpers';

const LOOSE = { limits: { search: { recent: { capacity: 100_000, refill_per_second: 1000 }, relevance: { capacity: 100_000, refill_per_second: 1000 } } } };

function search(server: TestServer, key: Key, query: string): Promise<Res> {
  return server.get('/api/search?' + query, { key: key.key });
}

async function post(server: TestServer, key: Key, text: string): Promise<string> {
  const r = await server.post('/api/posts', { key: key.key, json: { text } });
  if (r.status !== 201) throw new Error(`post failed: ${r.status} ${r.text}`);
  return r.json.id as string;
}

const ids = (r: Res): string[] => r.json.items.map((i: { id: string }) => i.id);

/**
 * The ids a search answers once every post of `wanted` is among them, polling for at most the
 * contract's 5 s. (Posts go through the indexing partitions independently: one post found says
 * nothing about another.)
 */
async function searchable(server: TestServer, key: Key, query: string, ...wanted: string[]): Promise<string[]> {
  return waitFor(`posts ${wanted.join(', ')} to be found by ${query}`, async () => {
    const r = await search(server, key, query);
    return wanted.every((id) => ids(r).includes(id)) ? ids(r) : undefined;
  }, 5000);
}

t.test('every word must match, case and diacritics folded; new posts appear and deleted ones vanish', async (t) => {
  const server = await startServer({ config: LOOSE });
  t.teardown(() => server.close());
  const alice = await server.keygen('alice');
  const bob = await server.keygen('bob');
  const cafe = await post(server, alice, 'Rendez-vous au CAFÉ de la Gare à midi');
  const other = await post(server, bob, 'Le café est froid, la gare est loin');
  const lone = await post(server, alice, 'gare du nord');
  t.same(await searchable(server, bob, 'q=cafe%20GARE', other, cafe), [other, cafe], 'both words, any case, accents folded; newest first');
  await searchable(server, bob, 'q=gare', lone);
  t.same(ids(await search(server, alice, 'q=nord%20absent')), [], 'a word no post has');
  t.same(ids(await search(server, alice, 'q=NORD')), [lone]);
  const r = await search(server, bob, 'q=caf%C3%A9%20gare%20midi');
  t.same(ids(r), [cafe], 'all three words');
  t.same(r.json.items[0], {
    id: cafe,
    text: 'Rendez-vous au CAFÉ de la Gare à midi',
    author_id: alice.user_id,
    media_ids: [],
    reply_to: null,
    created_at: r.json.items[0].created_at,
    like_count: 0,
    reply_count: 0,
    author: { id: alice.user_id, handle: 'alice' },
  });
  t.equal(r.json.next_cursor, null);
  t.same(ids(await search(server, bob, 'q=gar')), [], 'whole words, not prefixes');
  // Compatibility forms (fullwidth letters, a ligature) and ß: found by their plain letters and
  // by themselves.
  const wide = await post(server, alice, 'Ｆｕｌｌ ﬁne Straße');
  t.same(await searchable(server, bob, 'q=full%20fine%20strasse', wide), [wide]);
  t.same(ids(await search(server, bob, `q=${encodeURIComponent('Ｆｕｌｌ ﬁne straße')}`)), [wide]);
  t.same(ids(await search(server, bob, 'q=gare&sort=relevance')).sort(), [cafe, other, lone].sort());

  // A like shows in the counts at once.
  t.equal((await server.post(`/api/posts/${cafe}/like`, { key: bob.key })).status, 204);
  t.equal((await search(server, bob, 'q=midi')).json.items[0].like_count, 1);

  // Deleted: gone from both orders (hydration drops it at once; the index follows).
  t.equal((await server.request('DELETE', `/api/posts/${other}`, { key: bob.key })).status, 204);
  await waitFor('the deleted post to vanish', async () => {
    const [a, b] = await Promise.all([search(server, alice, 'q=froid'), search(server, alice, 'q=froid&sort=relevance')]);
    return a.json.items.length === 0 && b.json.items.length === 0 ? true : undefined;
  }, 5000);
  t.same(ids(await search(server, alice, 'q=gare')), [lone, cafe]);
});

t.test('pages of both orders: cursors follow their list, nothing twice, nothing missed', async (t) => {
  const server = await startServer({ config: LOOSE });
  t.teardown(() => server.close());
  const alice = await server.keygen('alice');
  const made: string[] = [];
  for (let i = 0; i < 13; i++) made.push(await post(server, alice, `${'delta '.repeat(1 + (i % 3))}page item ${i}`));
  await searchable(server, alice, 'q=delta&limit=100', ...made);
  const all = async (sort: string) => {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let n = 0; n < 10; n++) {
      const r = await search(server, alice, `q=delta&sort=${sort}&limit=5${cursor ? '&cursor=' + encodeURIComponent(cursor) : ''}`);
      t.equal(r.status, 200);
      seen.push(...ids(r));
      cursor = r.json.next_cursor;
      if (cursor === null) break;
    }
    return seen;
  };
  t.same(await all('recent'), [...made].reverse(), 'recent: newest first, in pages of 5');
  const relevance = await all('relevance');
  t.same(relevance, ids(await search(server, alice, 'q=delta&sort=relevance&limit=100')), 'relevance: the same order as one big page');
  t.same(relevance.slice(0, 4), [made[11], made[8], made[5], made[2]], 'three times the word first, newest first');

  const first = await search(server, alice, 'q=delta&limit=2');
  const cursor = encodeURIComponent(first.json.next_cursor);
  for (const other of [`q=page&limit=2&cursor=${cursor}`, `q=delta&sort=relevance&cursor=${cursor}`, 'q=delta&cursor=bogus~AAAAAAAAAAAAAAAA', 'q=delta&cursor=']) {
    const r = await search(server, alice, other);
    t.equal(r.status, 400, other);
    t.same(r.json.details, [{ path: 'cursor', message: 'not a cursor issued for this list' }]);
  }
  t.equal((await search(server, alice, `q=%20DELTA%20&limit=2&cursor=${cursor}`)).status, 200, 'the same query once normalised');
});

t.test('hostile query text is plain words: never a 500', async (t) => {
  const server = await startServer({ config: LOOSE });
  t.teardown(() => server.close());
  const alice = await server.keygen('alice');
  const gate = await post(server, alice, 'NEAR the AND gate: OR not (text) "quoted" a*b ^start');
  await searchable(server, alice, 'q=gate', gate);
  const hostile = [
    '"', '""', '"unterminated', 'AND', 'OR', 'NOT', 'NEAR', 'NEAR(a b, 3)', 'a AND', 'OR b', 'NOT NOT', '*', 'a*', '^a', '^',
    'text:value', 'text : gate', '{text}: gate', '-text:gate', '(', ')', '(a OR b', 'a) AND (b', '+', '-', ':', ',', '.', '\\',
    "'", ';DROP TABLE posts;--', '%25', '_', 'null', '%00', 'a%00b', '🙂', '\u200b', '\u0301', 'ﬁ', '東京', 'near/3', '%ED%A0%80',
  ];
  const rand = seededInts(11);
  const pieces = ['"', '(', ')', '*', '^', ':', '+', '-', ' ', 'AND', 'OR', 'NOT', 'NEAR', 'gate', 'text', ',', '{', '}', '%00', 'é', '.', "'", '%22'];
  for (let i = 0; i < 150; i++) {
    let q = '';
    for (let k = 0, n = 1 + rand(10); k < n; k++) q += pieces[rand(pieces.length)];
    hostile.push(q);
  }
  let found = 0;
  for (const q of hostile) {
    const encoded = /%[0-9A-F]{2}/.test(q) ? q.replace(/ /g, '%20').replace(/[#&+]/g, encodeURIComponent) : encodeURIComponent(q);
    for (const sort of ['recent', 'relevance']) {
      const r = await search(server, alice, `q=${encoded}&sort=${sort}`);
      if (r.status !== 200 && r.status !== 400) t.fail(`${JSON.stringify(q)} ${sort}: ${r.status} ${r.text}`);
      if (r.status === 200 && ids(r).includes(gate)) found++;
    }
  }
  t.ok(found > 20, `the post was found by ${found} of them`);
  t.same(ids(await search(server, alice, 'q=' + encodeURIComponent('NEAR AND OR NOT'))), [gate], 'operator words are words');
  t.same(ids(await search(server, alice, 'q=' + encodeURIComponent('text:gate'))), [gate], 'no column filter');
  t.same(ids(await search(server, alice, 'q=' + encodeURIComponent('"quoted" (text)'))), [gate]);
  t.same((await search(server, alice, 'q=' + encodeURIComponent('!!! ***'))).json, { items: [], next_cursor: null }, 'no words: nothing matches');
});

t.test('bad input: one 400 naming every problem, nothing taken from the limit; no key: 401', async (t) => {
  const server = await startServer({ config: { limits: { search: { recent: { capacity: 5, refill_per_second: 0.001 }, relevance: { capacity: 5, refill_per_second: 0.001 } } } } });
  t.teardown(() => server.close());
  const alice = await server.keygen('alice');
  const cases: Array<[string, Array<{ path: string; message: string }>]> = [
    ['', [{ path: 'q', message: 'is required' }]],
    ['q=', [{ path: 'q', message: 'must contain something other than white space' }]],
    ['q=%20%09', [{ path: 'q', message: 'must contain something other than white space' }]],
    ['q=a&sort=newest', [{ path: 'sort', message: 'must be "recent" or "relevance"' }]],
    ['q=a&limit=0', [{ path: 'limit', message: 'must be an integer from 1 to 100' }]],
    ['q=a&limit=101', [{ path: 'limit', message: 'must be an integer from 1 to 100' }]],
    ['q=' + 'x'.repeat(257), [{ path: 'q', message: 'is 257 characters long; the limit is 256' }]],
    ['sort=up&limit=x', [{ path: 'q', message: 'is required' }, { path: 'sort', message: 'must be "recent" or "relevance"' }, { path: 'limit', message: 'must be an integer from 1 to 100' }]],
  ];
  for (const [query, details] of cases) {
    const r = await search(server, alice, query);
    t.equal(r.status, 400, query);
    t.equal(r.json.error, 'invalid_request');
    t.same(r.json.details, details, query);
    t.ok(hasLimitHeaders(r), 'limit headers on a 400 too');
    t.equal(limitHeaders(r).remaining, 5, 'nothing taken');
  }
  const ok = await search(server, alice, 'q=a&sort=relevance&limit=100');
  t.equal(ok.status, 200);
  t.same(limitHeaders(ok).remaining, 4);
  const anonymous = await server.get('/api/search?q=a');
  t.equal(anonymous.status, 401);
  t.equal(anonymous.headers.get('www-authenticate'), 'Bearer');
  t.same(limitHeaders(anonymous).remaining, 5, 'a 401 shows the limits a key starts with');
  t.same(limitHeaders(anonymous).limit, 5);
  t.same(limitHeaders(await search(server, alice, 'q=a&sort=relevance')).remaining, 3, "alice's as they were, less this one");
});

t.test('each tier has its own bucket per key; 429 with retry and the headers', async (t) => {
  const server = await startServer({ config: { limits: { search: { recent: { capacity: 3, refill_per_second: 0.01 }, relevance: { capacity: 2, refill_per_second: 0.005 } } } } });
  t.teardown(() => server.close());
  const alice = await server.keygen('alice');
  const bob = await server.keygen('bob');
  const nowS = () => Math.floor(Date.now() / 1000);
  for (let i = 0; i < 3; i++) {
    const r = await search(server, alice, 'q=x');
    t.equal(r.status, 200);
    t.same([limitHeaders(r).limit, limitHeaders(r).remaining], [3, 2 - i]);
    t.ok(limitHeaders(r).reset >= nowS(), 'reset is a Unix time ahead');
  }
  const limited = await search(server, alice, 'q=x');
  t.equal(limited.status, 429);
  t.equal(limited.json.error, 'rate_limited');
  t.ok(Number.isInteger(limited.json.retry_after_seconds) && limited.json.retry_after_seconds >= 1);
  t.equal(limited.headers.get('retry-after'), String(limited.json.retry_after_seconds));
  t.same([limitHeaders(limited).limit, limitHeaders(limited).remaining], [3, 0]);
  t.equal(limited.json.retry_after_seconds, 100, 'one token at 0.01/s, rounded up');

  // The expensive tier is a bucket of its own, and stricter.
  for (let i = 0; i < 2; i++) {
    const r = await search(server, alice, 'q=x&sort=relevance');
    t.equal(r.status, 200);
    t.same([limitHeaders(r).limit, limitHeaders(r).remaining], [2, 1 - i]);
  }
  const expensive = await search(server, alice, 'q=x&sort=relevance');
  t.equal(expensive.status, 429);
  t.equal(expensive.json.retry_after_seconds, 200);
  t.same([limitHeaders(expensive).limit, limitHeaders(expensive).remaining], [2, 0]);
  const bad = await search(server, alice, 'q=&sort=relevance');
  t.equal(bad.status, 400, 'bad input is still 400 when the bucket is empty');
  t.same([limitHeaders(bad).limit, limitHeaders(bad).remaining], [2, 0], "with that tier's headers");

  // Another key has full buckets.
  const other = await search(server, bob, 'q=x');
  t.same([other.status, limitHeaders(other).remaining], [200, 2]);
});

t.test('perch reindex rebuilds the index beside a running server; /metrics shows the indexer', async (t) => {
  const server = await startServer({ config: LOOSE });
  t.teardown(() => server.close());
  const alice = await server.keygen('alice');
  const made: string[] = [];
  for (let i = 0; i < 5; i++) made.push(await post(server, alice, `reindexed post ${i}`));
  await searchable(server, alice, 'q=reindexed', ...made);
  await server.request('DELETE', `/api/posts/${made[0]}`, { key: alice.key });
  const help = await server.cli(['reindex', '--help']);
  t.equal(help.code, 0);
  t.match(help.stdout, /rebuild the search index/);
  const r = await server.cli(['reindex', '--json']);
  t.equal(r.code, 0, r.stderr);
  t.equal(JSON.parse(r.stdout).posts, 4);
  t.same(ids(await search(server, alice, 'q=reindexed')), made.slice(1).reverse());
  const later = await post(server, alice, 'reindexed after the rebuild');
  t.same((await searchable(server, alice, 'q=reindexed', later)).length, 5, 'the indexer goes on after it');
  const metrics = (await server.get('/metrics')).text;
  for (const name of ['perch_search_queue_depth', 'perch_search_queue_capacity 50000', 'perch_search_budget_batch', 'perch_search_budget_rate', 'perch_search_bulk_rejections_total', 'perch_search_index_lag_events{partition="0"}']) {
    t.match(metrics, name);
  }
  const status = JSON.parse((await server.cli(['status', '--json'])).stdout);
  t.equal(status.search.indexed_posts, 5);
  t.equal(status.search.queue.capacity, 50000);
});
