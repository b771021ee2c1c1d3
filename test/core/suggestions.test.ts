import t from 'tap';
import { seededInts } from '../fixtures/random';
import { SCORE_EPOCH_MS } from '../../src/core/decay';
import { byScore, listedPrefixes, mergeTopK, prefixesOf, rankSuggestions, type Scored } from '../../src/core/suggestions';

t.test('prefixes by code point, capped', async (t) => {
  t.same(prefixesOf('cat', 100), ['c', 'ca', 'cat']);
  t.same(prefixesOf('a😀b', 100), ['a', 'a😀', 'a😀b']);
  t.same(prefixesOf('abcdef', 3), ['a', 'ab', 'abc']);
  t.same(prefixesOf('', 3), []);
});

t.test('mergeTopK replaces, inserts, evicts the lowest and says when nothing changed', async (t) => {
  const list: Scored[] = [['a', 9], ['b', 7], ['c', 5]];
  t.same(mergeTopK(list, [['d', 6]], 3), [['a', 9], ['b', 7], ['d', 6]]);
  t.same(mergeTopK(list, [['c', 10]], 3), [['c', 10], ['a', 9], ['b', 7]]);
  t.same(mergeTopK(list, [['d', 1]], 4), [['a', 9], ['b', 7], ['c', 5], ['d', 1]]);
  t.equal(mergeTopK(list, [['d', 1]], 3), null, 'too low to enter a full list');
  t.equal(mergeTopK(list, [['b', 7]], 3), null, 'the same score');
  t.same(mergeTopK([], [['x', 1], ['y', 1]], 3), [['x', 1], ['y', 1]], 'equal scores by query');
  t.ok(byScore(['a', 1], ['b', 1]) < 0 && byScore(['b', 2], ['a', 1]) < 0);
});

t.test('listed prefixes: those shared by more than k queries, with their exact top k', async (t) => {
  const entries: Scored[] = [
    ['ca', 1],
    ['cab', 4],
    ['cat', 9],
    ['cats', 3],
    ['cow', 2],
    ['dog', 8],
  ];
  const got = new Map(listedPrefixes(entries, 2, 100));
  t.same([...got.keys()].sort(), ['c', 'ca', 'cat'].filter((p) => p !== 'cat'), 'only c (5 queries) and ca (4); cat has 2');
  t.same(got.get('c'), [['cat', 9], ['cab', 4]]);
  t.same(got.get('ca'), [['cat', 9], ['cab', 4]]);
  // With k = 1 every prefix shared by two or more is listed.
  const k1 = new Map(listedPrefixes(entries, 1, 100));
  t.same(Object.fromEntries(k1), { c: [['cat', 9]], ca: [['cat', 9]], cat: [['cat', 9]] });
});

t.test('listed prefixes agree with a brute force over random queries', async (t) => {
  const ints = seededInts(7);
  const rand = () => ints(1_000_000) / 1_000_000;
  const alphabet = ['a', 'b', 'é', '😀'];
  const queries = new Map<string, number>();
  while (queries.size < 400) {
    let q = '';
    const n = 1 + Math.floor(rand() * 5);
    for (let i = 0; i < n; i++) q += alphabet[Math.floor(rand() * alphabet.length)];
    queries.set(q, Math.round(rand() * 1000) / 10);
  }
  const sorted = [...queries.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1));
  for (const [k, maxChars] of [[3, 100], [5, 2]]) {
    const got = new Map(listedPrefixes(sorted, k, maxChars));
    const expected = new Map<string, Scored[]>();
    const prefixes = new Set(sorted.flatMap(([q]) => prefixesOf(q, maxChars)));
    for (const p of prefixes) {
      const sharing = sorted.filter(([q]) => q.startsWith(p)).sort(byScore);
      if (sharing.length > k) expected.set(p, sharing.slice(0, k));
    }
    t.same(new Map([...got].sort()), new Map([...expected].sort()), `k=${k}, maxChars=${maxChars}`);
  }
});

t.test('suggestions: volume rounded, zero left out, ties by query, limited', async (t) => {
  const H = 1000;
  const now = SCORE_EPOCH_MS + 5_000_000;
  const score = (count: number) => Math.log2(count) + 5000;
  const got = rankSuggestions([['b', score(3.4)], ['a', score(2.6)], ['c', score(10)], ['z', score(0.4)], ['d', score(3)]], now, H, 3);
  t.same(got, [
    { query: 'c', volume: 10 },
    { query: 'a', volume: 3 },
    { query: 'b', volume: 3 },
  ]);
  t.same(rankSuggestions([['z', score(0.4)]], now, H, 10), []);
  t.same(rankSuggestions([['x', score(8)]], now + 2 * H, H, 10), [{ query: 'x', volume: 2 }], 'decayed by two half-lives');
});
