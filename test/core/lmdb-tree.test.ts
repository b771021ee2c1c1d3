import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { lmdbTreeProblem, newestMeta, type MetaSummary } from '../../src/core/lmdb-tree';

const PAGE = 4096;

/**
 * A data file lmdb-js wrote: three named databases, one with values large enough for overflow
 * pages, enough keys for branch pages, and rewrites so that the free-page database has records.
 */
async function written(): Promise<Buffer> {
  const dir = mkdtempSync(join(tmpdir(), 'perch-lmdb-tree-'));
  try {
    const root = open({ path: dir, maxDbs: 8, noSync: true, compression: false });
    const small = root.openDB({ name: 'small' });
    const many = root.openDB({ name: 'many' });
    const big = root.openDB({ name: 'big', encoding: 'binary' });
    small.putSync('k', 'v');
    for (let round = 0; round < 3; round++) {
      await many.transaction(() => {
        for (let i = 0; i < 3000; i++) many.put(`key-${String(i).padStart(5, '0')}`, { round, i, pad: 'x'.repeat(40) });
      });
    }
    await big.put('large', Buffer.alloc(3 * PAGE + 100, 7));
    await big.put('larger', Buffer.alloc(9 * PAGE, 9));
    await root.close();
    return readFileSync(join(dir, 'data.mdb'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function check(file: Buffer): string | null {
  const meta: MetaSummary = newestMeta(file.subarray(0, PAGE), file.subarray(PAGE, 2 * PAGE));
  return lmdbTreeProblem(meta, PAGE, (pgno) => ((pgno + 1) * PAGE <= file.length ? file.subarray(pgno * PAGE, (pgno + 1) * PAGE) : null));
}

/** Page numbers of the pages of one kind (flags) in the newest snapshot's file. */
function pagesWithFlags(file: Buffer, flags: number): number[] {
  const found: number[] = [];
  const meta = newestMeta(file.subarray(0, PAGE), file.subarray(PAGE, 2 * PAGE));
  for (let p = 2; p <= Number(meta.lastPage); p++) {
    if (file.readBigUInt64LE(p * PAGE) === BigInt(p) && file.readUInt16LE(p * PAGE + 18) === flags) found.push(p);
  }
  return found;
}

/** Whether the newest snapshot reaches page `p` (a page rewritten and freed is not). */
function reached(file: Buffer, p: number): boolean {
  const copy = Buffer.from(file);
  copy.writeBigUInt64LE(123456789n, p * PAGE);
  return check(copy) !== null;
}

t.test('every page of a file lmdb-js wrote passes', async (t) => {
  const file = await written();
  t.equal(check(file), null);
  t.ok(pagesWithFlags(file, 0x01).length > 0, 'the file has branch pages');
  t.ok(pagesWithFlags(file, 0x04).length >= 2, 'and overflow pages');
});

t.test('each kind of damage is found and named', async (t) => {
  const file = await written();
  const meta = newestMeta(file.subarray(0, PAGE), file.subarray(PAGE, 2 * PAGE));
  const mainRoot = Number(meta.main.root);
  const damaged = (change: (b: Buffer) => void): string | null => {
    const copy = Buffer.from(file);
    change(copy);
    return check(copy);
  };

  // Random-looking bytes over the main database's root page: the page's own number is wrong.
  const garbage = Buffer.alloc(PAGE);
  for (let i = 0, s = 7; i < PAGE; i++) {
    s = (s * 1103515245 + 12345) % 2147483648;
    garbage[i] = s >>> 16;
  }
  t.match(damaged((b) => garbage.copy(b, mainRoot * PAGE)), new RegExp(`^the main database: page ${mainRoot} says it is page \\d+$`));

  const branch = pagesWithFlags(file, 0x01).find((p) => reached(file, p))!;
  const leaf = pagesWithFlags(file, 0x02).find((p) => p !== mainRoot && reached(file, p))!;
  const overflow = pagesWithFlags(file, 0x04).find((p) => reached(file, p))!;
  t.ok(branch && leaf && overflow, 'pages of each kind the snapshot reaches');

  t.match(damaged((b) => b.writeUInt16LE(0x02, branch * PAGE + 18)), /has flags 0x2 where a branch page belongs/, 'a branch page marked as a leaf');
  t.match(damaged((b) => b.writeUInt16LE(0x01, leaf * PAGE + 18)), /has flags 0x1 where a leaf page belongs/, 'a leaf page marked as a branch');
  t.match(damaged((b) => b.writeUInt16LE(PAGE, leaf * PAGE + 22)), /has bounds \d+\.\.4096 in 4072 bytes/, 'free space past the page');
  t.match(damaged((b) => b.writeUInt16LE(5000, leaf * PAGE + 24)), /has node 0 at 5000, outside/, 'a node pointer past the page');
  t.match(damaged((b) => b.writeBigUInt64LE(meta.txnid + 5n, leaf * PAGE + 8)), /was written by transaction \d+, after the snapshot's/, 'a page from the future');
  // A branch's child pointer (lo, hi and flags of its first node) aimed past the pages in use,
  // then at a meta page, then at a page the same tree reaches elsewhere.
  const firstChild = (b: Buffer) => branch * PAGE + 24 + b.readUInt16LE(branch * PAGE + 24);
  const aim = (b: Buffer, pgno: bigint) => {
    const at = firstChild(b);
    b.writeUInt16LE(Number(pgno & 0xffffn), at);
    b.writeUInt16LE(Number((pgno >> 16n) & 0xffffn), at + 2);
    b.writeUInt16LE(Number(pgno >> 32n), at + 4);
  };
  t.match(damaged((b) => aim(b, meta.lastPage + 10n)), /a pointer to page \d+, outside the pages in use/, 'a child past the pages in use');
  t.match(damaged((b) => aim(b, 1n)), /a pointer to page 1, outside the pages in use/, 'a child that is a meta page');
  const secondChild = (b: Buffer) => {
    const at = branch * PAGE + 24 + b.readUInt16LE(branch * PAGE + 26);
    return BigInt(b.readUInt16LE(at)) | (BigInt(b.readUInt16LE(at + 2)) << 16n);
  };
  t.match(damaged((b) => aim(b, secondChild(b))), /is reached twice/, 'two children that are one page');
  t.match(damaged((b) => b.writeUInt16LE(0x02, overflow * PAGE + 18)), /is not an overflow page/, 'an overflow page marked as a leaf');
  t.match(damaged((b) => b.writeUInt32LE(1, overflow * PAGE + 20)), /holds 1 pages, too few/, 'an overflow run cut short');
});

t.test('keys out of order on a leaf are damage', async (t) => {
  const file = await written();
  const meta = newestMeta(file.subarray(0, PAGE), file.subarray(PAGE, 2 * PAGE));
  // A leaf of "many" (keys key-00000...): swap its first two node pointers.
  const leaf = pagesWithFlags(file, 0x02).find((p) => {
    if (p === Number(meta.main.root) || !reached(file, p)) return false;
    const at = p * PAGE + 24 + file.readUInt16LE(p * PAGE + 24);
    return file.subarray(at + 8, at + 12).toString() === 'key-' && file.readUInt16LE(p * PAGE + 20) >= 4;
  })!;
  t.ok(leaf, 'a leaf of many keys');
  const copy = Buffer.from(file);
  const a = copy.readUInt16LE(leaf * PAGE + 24);
  copy.writeUInt16LE(copy.readUInt16LE(leaf * PAGE + 26), leaf * PAGE + 24);
  copy.writeUInt16LE(a, leaf * PAGE + 26);
  t.match(check(copy), /has keys out of order at node 1/);
});

t.test('a page past the end of the file is damage, not an exception', async (t) => {
  const file = await written();
  const meta = newestMeta(file.subarray(0, PAGE), file.subarray(PAGE, 2 * PAGE));
  const cut = file.subarray(0, Number(meta.main.root) * PAGE);
  t.match(check(cut), /is past the end of the file/);
});
