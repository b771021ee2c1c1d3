import t from 'tap';
import { IdTable, addToTimeline, decodeTimeline, encodeTimeline, idsBelow, isWindow, mergeNewestFirst, windowFloor } from '../../src/core/timeline-merge';

t.test('encode/decode round-trip', async (t) => {
  const buf = encodeTimeline(5n, [7n, 9n, 2n ** 62n]);
  t.equal(buf.length, 32);
  t.same(decodeTimeline(buf), { floor: 5n, ids: [7n, 9n, 2n ** 62n] });
});

t.test('a new timeline starts with floor just below its first id', async (t) => {
  t.same(decodeTimeline(addToTimeline(undefined, [30n, 10n, 20n], 10)), { floor: 9n, ids: [10n, 20n, 30n] });
  t.same(decodeTimeline(addToTimeline(undefined, [42n], 10)), { floor: 41n, ids: [42n] });
});

t.test('adding is idempotent and ignores ids at or below floor', async (t) => {
  const a = addToTimeline(undefined, [10n, 20n], 10);
  const b = addToTimeline(a, [20n, 10n, 15n, 15n, 9n, 5n], 10);
  t.same(decodeTimeline(b), { floor: 9n, ids: [10n, 15n, 20n] });
  t.same(decodeTimeline(addToTimeline(b, [20n], 10)), { floor: 9n, ids: [10n, 15n, 20n] });
  t.same(decodeTimeline(addToTimeline(b, [12n], 10)), { floor: 9n, ids: [10n, 12n, 15n, 20n] });
});

t.test('the cap trims the oldest ids and raises floor', async (t) => {
  let buf = addToTimeline(undefined, [1n], 3);
  for (const id of [2n, 3n, 4n, 5n]) buf = addToTimeline(buf, [id], 3);
  t.same(decodeTimeline(buf), { floor: 2n, ids: [3n, 4n, 5n] });
  t.same(decodeTimeline(addToTimeline(buf, [7n, 6n, 1n], 3)), { floor: 4n, ids: [5n, 6n, 7n] });
});

t.test('idsBelow reads newest first below a bound', async (t) => {
  const w = encodeTimeline(0n, [1n, 3n, 5n, 7n, 9n]);
  t.same(idsBelow(w, 1n << 63n, 3), [9n, 7n, 5n]);
  t.same(idsBelow(w, 7n, 10), [5n, 3n, 1n]);
  t.same(idsBelow(w, 6n, 2), [5n, 3n]);
  t.same(idsBelow(w, 1n, 2), []);
  t.same(idsBelow(w, 8n, 10), [7n, 5n, 3n, 1n]);
  t.same(idsBelow(encodeTimeline(4n, []), 10n, 5), [], 'an empty window');
  t.equal(windowFloor(encodeTimeline(41n, [42n])), 41n);
  t.equal(isWindow(encodeTimeline(0n, [])), true);
  t.equal(isWindow(Buffer.alloc(4)), false);
  t.equal(isWindow(undefined), false);
});

t.test('mergeNewestFirst merges sorted lists without duplicates', async (t) => {
  t.same(mergeNewestFirst([[9n, 5n, 1n], [8n, 5n, 2n], []], 10), [9n, 8n, 5n, 2n, 1n]);
  t.same(mergeNewestFirst([[9n, 5n, 1n], [8n, 5n, 2n]], 3), [9n, 8n, 5n]);
  t.same(mergeNewestFirst([], 3), []);
});

t.test('adding matches a plain sorted merge, on the append fast path and off it', async (t) => {
  // Reference: merge, drop ids at or below floor and duplicates, keep the newest `cap`.
  const reference = (floor: bigint, ids: bigint[], add: bigint[], cap: number) => {
    const all = [...new Set([...ids, ...add])].filter((v) => v > floor).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    if (all.length <= cap) return { floor, ids: all };
    return { floor: all[all.length - cap - 1], ids: all.slice(all.length - cap) };
  };
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  for (let round = 0; round < 500; round++) {
    const cap = 1 + rand(12);
    const floor = BigInt(rand(50));
    const ids: bigint[] = [];
    for (let v = floor + 1n, k = rand(cap + 1); k > 0; k--, v += BigInt(1 + rand(5))) ids.push(v);
    const top = ids.length > 0 ? ids[ids.length - 1] : floor;
    // Half the rounds add only newer ids (the fast path), the rest anything, duplicates included.
    const add: bigint[] = [];
    for (let k = 1 + rand(2 * cap); k > 0; k--) add.push(round % 2 === 0 ? top + 1n + BigInt(rand(20)) : BigInt(rand(80)));
    const got = decodeTimeline(addToTimeline(encodeTimeline(floor, ids), add, cap));
    t.same(got, reference(floor, ids, add, cap), `cap ${cap} floor ${floor} ids ${ids.join(',')} add ${add.join(',')}`);
  }
  t.end();
});

t.test('appending to a full window drops the oldest ids, and added ones when many', async (t) => {
  const full = encodeTimeline(0n, [1n, 2n, 3n]);
  t.same(decodeTimeline(addToTimeline(full, [5n, 4n], 3)), { floor: 2n, ids: [3n, 4n, 5n] });
  t.same(decodeTimeline(addToTimeline(full, [9n, 8n, 7n, 6n, 6n], 3)), { floor: 6n, ids: [7n, 8n, 9n] });
  t.same(decodeTimeline(addToTimeline(encodeTimeline(4n, []), [6n, 5n], 3)), { floor: 4n, ids: [5n, 6n] });
});

t.test('IdTable.addTo gives the value addToTimeline gives, on the fast path and off it', async (t) => {
  // Ids with both 32-bit halves in use, as snowflake ids have.
  const base = 382893587576131584n;
  const table = new IdTable([0n, 1n, 7n, 8n, 1n << 32n, (1n << 32n) + 5n, 0xffffffffn, base, base + 3n, base + (1n << 33n)].sort((a, b) => (a < b ? -1 : 1)));
  const at = (i: number[]) => i.map((k) => table.ids[k]);
  let seed = 7;
  const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  let fast = 0;
  for (let round = 0; round < 500; round++) {
    const cap = 1 + random(6);
    // Every other round the window is older than what is added: the fan-out's usual case.
    const split = round % 2 === 0 ? 5 : 0;
    const windowIds = Array.from({ length: random(6) }, () => table.ids[random(split || table.ids.length)]);
    const current = random(5) === 0 ? undefined : addToTimeline(undefined, windowIds.length ? windowIds : [base - 1n], cap);
    const indexes = Array.from({ length: random(5) }, () => split + random(table.ids.length - split));
    const want = addToTimeline(current, at(indexes), cap);
    const got = table.addTo(current, [...indexes], cap);
    if (!got.equals(want)) {
      t.fail(`round ${round}: ${JSON.stringify(decodeTimeline(got), (_, v) => (typeof v === 'bigint' ? String(v) : v))}`);
      return;
    }
    if (current && indexes.length && indexes.every((k) => table.ids[k] > (decodeTimeline(current).ids.at(-1) ?? windowFloor(current)))) fast++;
  }
  t.ok(fast > 100, `the fast path was taken (${fast} of 500)`);
  t.same(decodeTimeline(table.addTo(encodeTimeline(0n, [1n]), [4, 2, 4, 3], 3)), { floor: 1n, ids: [7n, 8n, 0xffffffffn] });
  t.throws(() => new IdTable([2n, 1n]), /ascending/);
});
