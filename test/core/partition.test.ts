import t from 'tap';
import { partitionOf } from '../../src/core/partition';

t.test('posts spread over partitions by id', async (t) => {
  t.equal(partitionOf(0n, 2), 0);
  t.equal(partitionOf(1_000_004n, 2), 1);
  t.equal(partitionOf(7205759403792793600n, 2), 1);
  // Ids minted one per millisecond (sequence 0, node 1) fall into both partitions evenly.
  const counts = [0, 0];
  for (let ms = 0n; ms < 1000n; ms++) counts[partitionOf((ms << 22n) | (1n << 12n), 2)]++;
  t.ok(counts[0] > 400 && counts[1] > 400, `spread ${counts}`);
});
