import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { LMDB_DATA_VERSION, LMDB_MAGIC, lmdbHeaderProblem } from '../../src/core/lmdb-header';

/** Two meta pages as LMDB writes them, then `extraPages` empty pages. */
function file(pageSize = 4096, extraPages = 1): Buffer {
  const b = Buffer.alloc(pageSize * (2 + extraPages));
  for (let i = 0; i < 2; i++) {
    const at = i * pageSize;
    b.writeBigUInt64LE(BigInt(i), at);
    b.writeUInt16LE(0x08, at + 18);
    b.writeUInt32LE(LMDB_MAGIC, at + 24);
    b.writeUInt32LE(LMDB_DATA_VERSION, at + 28);
    b.writeUInt32LE(pageSize, at + 48);
  }
  return b;
}

t.test('a well-formed header passes, for every page size LMDB allows', async (t) => {
  for (const size of [256, 4096, 8192, 65536]) t.equal(lmdbHeaderProblem(file(size), file(size).length), null, String(size));
  t.equal(lmdbHeaderProblem(Buffer.alloc(0), 0), null, 'an empty file is a new one');
  const withHighBits = file();
  withHighBits.writeUInt32LE(LMDB_DATA_VERSION | 0x10000, 28);
  t.equal(lmdbHeaderProblem(withHighBits, withHighBits.length), null, 'only the low 16 bits of the version count');
});

t.test('the header of a data file lmdb-js wrote passes', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'perch-lmdb-header-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const root = open({ path: dir, maxDbs: 4, noSync: true, compression: false });
  root.openDB({ name: 'x' }).putSync('k', 'v');
  await root.close();
  const bytes = readFileSync(join(dir, 'data.mdb'));
  t.equal(lmdbHeaderProblem(bytes, bytes.length), null);
});

t.test('damage is named', async (t) => {
  const zeroedFirstPage = file();
  zeroedFirstPage.fill(0, 0, 4096);
  t.equal(lmdbHeaderProblem(zeroedFirstPage, zeroedFirstPage.length), 'page 0 is not a meta page');

  const zeroedSecondPage = file();
  zeroedSecondPage.fill(0, 4096, 8192);
  t.equal(lmdbHeaderProblem(zeroedSecondPage, zeroedSecondPage.length), 'page 1 is not a meta page');

  const badMagic = file();
  badMagic.writeUInt32LE(0x12345678, 4096 + 24);
  t.equal(lmdbHeaderProblem(badMagic, badMagic.length), 'meta page 1 has magic number 0x12345678, not 0xbeefc0de');

  const oldVersion = file();
  oldVersion.writeUInt32LE(1, 28);
  t.equal(lmdbHeaderProblem(oldVersion, oldVersion.length), `meta page 0 has format version 1, not ${LMDB_DATA_VERSION}`);

  const badPageSize = file();
  badPageSize.writeUInt32LE(3000, 48);
  t.equal(lmdbHeaderProblem(badPageSize, badPageSize.length), 'meta page 0 gives page size 3000');

  const disagree = file();
  disagree.writeUInt32LE(8192, 4096 + 48);
  t.equal(lmdbHeaderProblem(disagree, disagree.length), 'the meta pages disagree on the page size (4096, 8192)');

  const truncated = file().subarray(0, 6000);
  t.equal(lmdbHeaderProblem(truncated, truncated.length), 'the file (6000 bytes) is shorter than its two meta pages of 4096 bytes');
  t.equal(lmdbHeaderProblem(Buffer.alloc(10), 10), 'meta page 0 is cut short');
});
