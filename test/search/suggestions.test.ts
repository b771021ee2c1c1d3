// Suggestions below HTTP: the counting task over a real stream (LMDB), counts (SQLite) and lists;
// lists maintained batch by batch equal lists built from the counts in one pass; a batch is
// counted once even when a crash falls between its two commits; lookups rank by decayed count.
import t, { type Test } from 'tap';
import { seededInts } from '../fixtures/random';
import { halfLifeMs, rankScore } from '../../src/core/decay';
import { MAX_PREFIX_CHARS } from '../../src/core/search-query';
import { TOP_K, listedPrefixes, type Scored } from '../../src/core/suggestions';
import { countQueries } from '../../src/search/counting';
import { forgetQueries } from '../../src/search/forgetting';
import { QueryStream, openQueryStream, queryStreamDepth } from '../../src/search/query-stream';
import { QueryCountStore } from '../../src/search/store';
import { SuggestionIndex } from '../../src/search/suggestions';
import { searchFixture } from './helpers';

const H = halfLifeMs(1);
const T0 = Date.UTC(2026, 10, 1);

async function pushAll(stream: QueryStream, hits: Array<[string, number]>): Promise<void> {
  for (const [q, ms] of hits) stream.push(q, ms);
  await stream.close();
}

/** The counts, the suggestion lists and the query stream of a fresh search fixture. */
async function countingFixture(t: Test) {
  const f = await searchFixture(t);
  return { f, counts: new QueryCountStore(f.db), suggestions: new SuggestionIndex(f.hot), streamDb: openQueryStream(f.hot) };
}

function storedLists(s: SuggestionIndex): Map<string, Scored[]> {
  s.lists.resetReadTxn();
  return new Map([...s.lists.getRange({})].map(({ key, value }) => [key, value]));
}

t.test('lists kept batch by batch equal lists built from the counts', async (t) => {
  const { f, counts, suggestions, streamDb } = await countingFixture(t);
  const stream = new QueryStream(f.hot, 7);
  const rand = seededInts(3);
  const letters = ['a', 'b', 'c', 'é'];
  let now = T0;
  for (let round = 0; round < 12; round++) {
    const hits: Array<[string, number]> = [];
    for (let i = 0; i < 80; i++) {
      let q = '';
      for (let k = 0, n = 1 + rand(4); k < n; k++) q += letters[rand(letters.length)];
      if (rand(5) === 0) q += ' ' + letters[rand(2)];
      hits.push([q, now + rand(1000)]);
    }
    now += 20 * 60 * 1000;
    await pushAll(stream, hits);
    countQueries({ stream: streamDb, counts, suggestions, halfLifeMs: H });
    t.equal(queryStreamDepth(streamDb), 0, `round ${round}: the stream is empty`);
  }
  const sorted = [...counts.sorted()].map(([q, c, u]): Scored => [q, rankScore({ count: c, updatedMs: u }, H)]);
  const expected = new Map(listedPrefixes(sorted, TOP_K, MAX_PREFIX_CHARS));
  t.ok(expected.size > 5, `${expected.size} listed prefixes of ${counts.queries()} queries`);
  t.same(storedLists(suggestions), expected, 'the same prefixes listed, each with the same top K');
  t.equal(suggestions.size(), counts.queries());

  // And a rebuild from the counts gives the same again.
  const rebuilt = suggestions.rebuild(counts.sorted(), H);
  t.same(rebuilt, { queries: counts.queries(), lists: expected.size });
  t.same(storedLists(suggestions), expected);
  t.equal(suggestions.needsRebuild(H), false);
  t.equal(suggestions.needsRebuild(halfLifeMs(2)), true, 'a new half-life needs new scores');
});

t.test('a batch is counted once when a crash falls between its SQLite and LMDB commits', async (t) => {
  const { f, counts, suggestions, streamDb } = await countingFixture(t);
  await pushAll(new QueryStream(f.hot, 7), [
    ['kittens', T0],
    ['kittens', T0],
    ['kitchen', T0],
  ]);
  const crashing = Object.create(suggestions) as SuggestionIndex;
  crashing.apply = () => {
    throw new Error('crash');
  };
  t.throws(() => countQueries({ stream: streamDb, counts, suggestions: crashing, halfLifeMs: H }), /crash/);
  t.same(counts.get('kittens'), { count: 2, updatedMs: T0 }, 'SQLite committed');
  t.equal(queryStreamDepth(streamDb), 1, 'the stream entry is still there');
  t.equal(countQueries({ stream: streamDb, counts, suggestions, halfLifeMs: H }), 0, 'nothing counted again');
  t.same(counts.get('kittens'), { count: 2, updatedMs: T0 });
  t.equal(queryStreamDepth(streamDb), 0);
  t.same(suggestions.lookup('kit', 10, T0, H), [
    { query: 'kittens', volume: 2 },
    { query: 'kitchen', volume: 1 },
  ]);
});

t.test('lookups: by decayed volume, ties by query, limited; listed and unlisted prefixes alike', async (t) => {
  const { f, counts, suggestions, streamDb } = await countingFixture(t);
  const hits: Array<[string, number]> = [];
  // 30 queries under "pre" (a listed prefix), each searched i + 1 times; and "old" searched 64
  // times five hours before the others.
  for (let i = 0; i < 30; i++) for (let k = 0; k <= i; k++) hits.push([`pre ${String(i).padStart(2, '0')}`, T0]);
  for (let k = 0; k < 64; k++) hits.push(['pre old', T0 - 5 * H]);
  await pushAll(new QueryStream(f.hot, 7), hits);
  countQueries({ stream: streamDb, counts, suggestions, halfLifeMs: H });
  t.ok(suggestions.lists.get('pre') !== undefined, '"pre" has a list');
  t.equal(suggestions.lists.get('pre 0'), undefined, '"pre 0" (10 queries) has none');
  t.same(suggestions.lookup('pre', 3, T0, H), [
    { query: 'pre 29', volume: 30 },
    { query: 'pre 28', volume: 29 },
    { query: 'pre 27', volume: 28 },
  ]);
  t.same(suggestions.lookup('pre 0', 3, T0, H), [
    { query: 'pre 09', volume: 10 },
    { query: 'pre 08', volume: 9 },
    { query: 'pre 07', volume: 8 },
  ]);
  t.same(suggestions.lookup('pre o', 5, T0, H), [{ query: 'pre old', volume: 2 }], '64 halved five times');
  t.same(suggestions.lookup('pre 2', 20, T0 + 3 * H, H).slice(0, 3), [
    { query: 'pre 28', volume: 4 },
    { query: 'pre 29', volume: 4 },
    { query: 'pre 20', volume: 3 },
  ], 'three half-lives later 29/8 and 30/8 both round to 4, and 21/8 to 27/8 to 3: ties by query');
  t.same(suggestions.lookup('zzz', 10, T0, H), []);
});

t.test('faded queries are forgotten, in both stores, without changing any suggestion', async (t) => {
  const { f, counts, suggestions, streamDb } = await countingFixture(t);
  const hits: Array<[string, number]> = [];
  // "live": 25 queries (a listed prefix), searched now. "gone": 25 queries searched once, 8
  // half-lives ago (value 1/256, below FORGET_BELOW). "mixed": one query searched 200 times then
  // (value 0.78: suggested, kept) and 24 once then: a list whose best entry lives on.
  for (let i = 0; i < 25; i++) hits.push([`live ${String(i).padStart(2, '0')}`, T0]);
  for (let i = 0; i < 25; i++) hits.push([`gone ${String(i).padStart(2, '0')}`, T0 - 8 * H]);
  for (let k = 0; k < 200; k++) hits.push(['mixed top', T0 - 8 * H]);
  for (let i = 0; i < 24; i++) hits.push([`mixed ${String(i).padStart(2, '0')}`, T0 - 8 * H]);
  await pushAll(new QueryStream(f.hot, 7), hits);
  countQueries({ stream: streamDb, counts, suggestions, halfLifeMs: H });
  t.equal(counts.queries(), 75);
  for (const p of ['live', 'gone', 'mixed']) t.ok(suggestions.lists.get(p), `"${p}" has a list`);
  const before = ['l', 'live', 'g', 'gone', 'm', 'mixed', 'mixed t'].map((p) => suggestions.lookup(p, 20, T0, H));

  const r = forgetQueries({ counts, suggestions, halfLifeMs: H }, '', T0);
  t.same(r, { forgotten: 49, lists: 5, done: true, after: 'mixed 23' }, 'the lists of "g", "go", "gon", "gone" and "gone " go; those of "mixed" stay');
  t.equal(counts.queries(), 26);
  t.equal(counts.get('gone 00'), null, 'gone from SQLite');
  t.same(counts.get('mixed top'), { count: 200, updatedMs: T0 - 8 * H }, 'a query still worth suggesting stays');
  suggestions.queries.resetReadTxn();
  t.equal(suggestions.size(), 26, 'and from LMDB');
  t.equal(suggestions.lists.get('gone'), undefined, 'a list with nothing left under it is removed');
  t.ok(suggestions.lists.get('mixed'), 'a list whose best entry lives on stays');
  const after = ['l', 'live', 'g', 'gone', 'm', 'mixed', 'mixed t'].map((p) => suggestions.lookup(p, 20, T0, H));
  t.same(after, before, 'every lookup answers as before');
  t.same(after[3], [], '"gone" suggested nothing before either');

  t.same(forgetQueries({ counts, suggestions, halfLifeMs: H }, '', T0), { forgotten: 0, lists: 0, done: true, after: '' }, 'a second pass finds nothing');

  // A forgotten query searched again starts from its one new hit.
  await pushAll(new QueryStream(f.hot, 7), [['gone 03', T0 + 1000]]);
  countQueries({ stream: streamDb, counts, suggestions, halfLifeMs: H });
  t.same(counts.get('gone 03'), { count: 1, updatedMs: T0 + 1000 });
  t.same(suggestions.lookup('gone', 5, T0 + 1000, H), [{ query: 'gone 03', volume: 1 }]);
});

t.test('a pass stopped by its time limit goes on where it stopped', async (t) => {
  const { f, counts, suggestions, streamDb } = await countingFixture(t);
  await pushAll(new QueryStream(f.hot, 7), [['alpha', T0 - 10 * H], ['beta', T0], ['gamma', T0 - 10 * H]]);
  countQueries({ stream: streamDb, counts, suggestions, halfLifeMs: H });
  const stopped = forgetQueries({ counts, suggestions, halfLifeMs: H }, '', T0, 0);
  t.same(stopped, { forgotten: 0, lists: 0, done: false, after: '' }, 'no time at all: nothing done');
  t.same(forgetQueries({ counts, suggestions, halfLifeMs: H }, 'beta', T0), { forgotten: 1, lists: 0, done: true, after: 'gamma' }, 'from after "beta" on: only gamma');
  t.ok(counts.get('alpha'), 'alpha waits for the next pass');
  t.same(forgetQueries({ counts, suggestions, halfLifeMs: H }, '', T0).forgotten, 1);
  t.same([...counts.sorted()].map((r) => r[0]), ['beta']);
});
