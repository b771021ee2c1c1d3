import t from 'tap';
import Database from 'better-sqlite3';
import { partitionOf, partitionSql } from '../../src/core/partition';

t.test('posts spread over partitions by id', async (t) => {
  t.equal(partitionOf(0n, 2), 0);
  t.equal(partitionOf(1_000_004n, 2), 1);
  t.equal(partitionOf(7205759403792793600n, 2), 1);
  // Ids minted one per millisecond (sequence 0, node 1) fall into both partitions evenly.
  const counts = [0, 0];
  for (let ms = 0n; ms < 1000n; ms++) counts[partitionOf((ms << 22n) | (1n << 12n), 2)]++;
  t.ok(counts[0] > 400 && counts[1] > 400, `spread ${counts}`);
});

t.test('the SQL form chooses the same partition as partitionOf', async (t) => {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE ids (id INTEGER PRIMARY KEY)');
  const ids = [0n, 1n, 1_000_003n, 1_000_004n, 7205759403792793600n, 9223372036854775807n];
  for (let ms = 1n; ms < 200n; ms++) ids.push((ms << 22n) | (1n << 12n) | (ms % 7n));
  const insert = db.prepare('INSERT INTO ids (id) VALUES (?)');
  for (const id of ids) insert.run(id);
  for (const partitions of [1, 2, 3]) {
    const chosen = db.prepare(`SELECT id FROM ids WHERE ${partitionSql('id')} ORDER BY id`).pluck().safeIntegers(true);
    for (let p = 0; p < partitions; p++) {
      const expected = ids.filter((id) => partitionOf(id, partitions) === p).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      t.same(chosen.all(partitions, p), expected, `partition ${p} of ${partitions}`);
    }
  }
  db.close();
});
