import t from 'tap';
import { floatToParts, partsToFloat } from '../../src/core/float-position';
import { partitionOf } from '../../src/core/partition';

t.test('a float64 goes to two uint32s and back, bit for bit', async (t) => {
  t.same(floatToParts(1), ['1072693248', '0']);
  t.same(floatToParts(-1.3541782808598661), ['3220548278', '3629380144']);
  t.same(floatToParts(-0), ['2147483648', '0']);
  for (const x of [0, -0.000002, -1.3541782808598661, Number.MAX_VALUE, -Number.MIN_VALUE, -Infinity]) {
    const [hi, lo] = floatToParts(x);
    t.ok(Object.is(partsToFloat(hi, lo), x), String(x));
  }
});

t.test('parts that are not two uint32s, or a NaN, are refused', async (t) => {
  t.equal(partsToFloat('4294967296', '0'), null);
  t.equal(partsToFloat('01', '0'), null);
  t.equal(partsToFloat('-1', '0'), null);
  t.equal(partsToFloat('2146959360', '0'), null, 'the bits of NaN');
});

t.test('posts spread over partitions by id', async (t) => {
  t.equal(partitionOf(0n, 2), 0);
  t.equal(partitionOf(1_000_004n, 2), 1);
  t.equal(partitionOf(7205759403792793600n, 2), 1);
  // Ids minted one per millisecond (sequence 0, node 1) fall into both partitions evenly.
  const counts = [0, 0];
  for (let ms = 0n; ms < 1000n; ms++) counts[partitionOf((ms << 22n) | (1n << 12n), 2)]++;
  t.ok(counts[0] > 400 && counts[1] > 400, `spread ${counts}`);
});
