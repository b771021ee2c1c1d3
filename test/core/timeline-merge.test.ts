import t from 'tap';
import { addToTimeline, appendNewest, decodeTimeline, encodeTimeline, idsBelow, mergeNewestFirst } from '../../src/core/timeline-merge';

t.test('encode/decode round-trip', async (t) => {
  const buf = encodeTimeline(5n, [7n, 9n, 2n ** 62n]);
  t.equal(buf.length, 32);
  t.same(decodeTimeline(buf), { floor: 5n, ids: [7n, 9n, 2n ** 62n] });
});

t.test('a new timeline starts with floor just below its first id', async (t) => {
  t.same(decodeTimeline(addToTimeline(undefined, [30n, 10n, 20n], 10)), { floor: 9n, ids: [10n, 20n, 30n] });
  t.same(decodeTimeline(appendNewest(undefined, 42n, 10)), { floor: 41n, ids: [42n] });
});

t.test('adding is idempotent and ignores ids at or below floor', async (t) => {
  const a = addToTimeline(undefined, [10n, 20n], 10);
  const b = addToTimeline(a, [20n, 10n, 15n, 15n, 9n, 5n], 10);
  t.same(decodeTimeline(b), { floor: 9n, ids: [10n, 15n, 20n] });
  t.same(decodeTimeline(appendNewest(b, 20n, 10)), { floor: 9n, ids: [10n, 15n, 20n] });
  t.same(decodeTimeline(appendNewest(b, 12n, 10)), { floor: 9n, ids: [10n, 12n, 15n, 20n] });
});

t.test('the cap trims the oldest ids and raises floor', async (t) => {
  let buf = addToTimeline(undefined, [1n], 3);
  for (const id of [2n, 3n, 4n, 5n]) buf = appendNewest(buf, id, 3);
  t.same(decodeTimeline(buf), { floor: 2n, ids: [3n, 4n, 5n] });
  t.same(decodeTimeline(addToTimeline(buf, [7n, 6n, 1n], 3)), { floor: 4n, ids: [5n, 6n, 7n] });
});

t.test('idsBelow reads newest first below a bound', async (t) => {
  const w = { floor: 0n, ids: [1n, 3n, 5n, 7n, 9n] };
  t.same(idsBelow(w, 1n << 63n, 3), [9n, 7n, 5n]);
  t.same(idsBelow(w, 7n, 10), [5n, 3n, 1n]);
  t.same(idsBelow(w, 6n, 2), [5n, 3n]);
  t.same(idsBelow(w, 1n, 2), []);
});

t.test('mergeNewestFirst merges sorted lists without duplicates', async (t) => {
  t.same(mergeNewestFirst([[9n, 5n, 1n], [8n, 5n, 2n], []], 10), [9n, 8n, 5n, 2n, 1n]);
  t.same(mergeNewestFirst([[9n, 5n, 1n], [8n, 5n, 2n]], 3), [9n, 8n, 5n]);
  t.same(mergeNewestFirst([], 3), []);
});
