// The page trees of an LMDB data file (data.mdb), checked from the bytes alone: every page the
// newest meta page reaches, in the free-page database, the main database (which lists the named
// databases) and every named database. LMDB trusts its pages: a page of garbage where a tree
// expects one is followed wherever its bytes point (into the pages after it, which differ from
// one file to the next), and reading through it can crash the reader, corrupt its heap, or pass a
// probe that reads everything, only for the next process that opens the store to crash on it.
// These checks need no LMDB and cannot crash: they read pages as buffers and stop at the first
// thing no LMDB would write. Pure: the caller reads the pages.
//
// Layout, as the LMDB bundled with lmdb-js 3 writes it (little-endian, 64-bit; lmdb-header.ts
// has the page header and the meta page's start):
//   page header, 24 bytes: page number (8), txnid (8), pad (2), flags (2), lower (2), upper (2);
//     an overflow page keeps its page count (4) where lower and upper are.
//   lower: 2 bytes per node pointer; pointers and upper are offsets from the end of the header.
//   node: lo (2), hi (2), flags (2), key size (2), key, data. In a branch node lo, hi and flags
//     hold the child's page number; in a leaf node lo and hi hold the data size.
//   database record (48 bytes): pad (4), flags (2), depth (2), branch, leaf and overflow page
//     counts (8 each), entries (8), root page (8; all ones for an empty database).
//   meta page, after the header: magic (4), version (4), address (8), map size (8), the free and
//     main database records (48 each), the last page used (8), the txnid (8).
import { FLAGS_OFFSET, META_DBS_OFFSET, PAGE_HEADER_BYTES as HEADER, P_META } from './lmdb-header';

const NODE_HEADER = 8;
const DB_RECORD = 48;
const PGNO_BYTES = 8;

const P_BRANCH = 0x01;
const P_LEAF = 0x02;
const P_OVERFLOW = 0x04;
const P_LEAF2 = 0x20;
const P_SUBP = 0x40;

const F_BIGDATA = 0x01;
const F_SUBDATA = 0x02;
const F_DUPDATA = 0x04;

const MDB_REVERSEKEY = 0x02;
const MDB_DUPSORT = 0x04;
const MDB_INTEGERKEY = 0x08;

/** An empty database's root. */
const NO_ROOT = 0xffffffffffffffffn;
/** Deeper than any tree of a file that fits a 64-bit address space. */
const MAX_DEPTH = 64;

const META_LAST_PAGE = META_DBS_OFFSET + 2 * DB_RECORD;
const META_TXNID = META_LAST_PAGE + 8;

export interface DbRecord {
  flags: number;
  depth: number;
  root: bigint;
}

export interface MetaSummary {
  txnid: bigint;
  lastPage: bigint;
  free: DbRecord;
  main: DbRecord;
}

function dbRecord(b: Buffer, at: number): DbRecord {
  return { flags: b.readUInt16LE(at + 4), depth: b.readUInt16LE(at + 6), root: b.readBigUInt64LE(at + 40) };
}

/** What a meta page says about the snapshot it commits (the page as read from the file). */
function readMeta(page: Buffer): MetaSummary {
  return {
    txnid: page.readBigUInt64LE(META_TXNID),
    lastPage: page.readBigUInt64LE(META_LAST_PAGE),
    free: dbRecord(page, META_DBS_OFFSET),
    main: dbRecord(page, META_DBS_OFFSET + DB_RECORD),
  };
}

/** The meta page LMDB opens with: the one with the larger txnid. */
export function newestMeta(first: Buffer, second: Buffer): MetaSummary {
  const a = readMeta(first);
  const b = readMeta(second);
  return b.txnid > a.txnid ? b : a;
}

/** Reads page `pgno`, or null when the file ends before it. */
export type PageReader = (pgno: number) => Buffer | null;

class Damage extends Error {}

/**
 * Why the trees of the snapshot `meta` names are not ones LMDB wrote, or null. Checks every
 * page reached from each root: its own page number, its txnid (not after the snapshot's), its
 * kind (branch or leaf, as the tree's depth says it must be), its bounds, each node inside the
 * page, keys in order (for databases ordered by their bytes), each child and overflow page inside
 * the file's used pages, and that no page is reached twice. Values are not read.
 */
export function lmdbTreeProblem(meta: MetaSummary, pageSize: number, read: PageReader): string | null {
  const lastPage = meta.lastPage;
  const usable = pageSize - HEADER;
  const seen = new Set<number>();

  function claim(n: number, what: string): void {
    if (seen.has(n)) throw new Damage(`${what}: page ${n} is reached twice`);
    seen.add(n);
  }

  function pageAt(pgno: bigint, what: string): Buffer {
    if (pgno < 2n || pgno > lastPage) throw new Damage(`${what}: a pointer to page ${pgno}, outside the pages in use (2 to ${lastPage})`);
    const n = Number(pgno);
    claim(n, what);
    const page = read(n);
    if (!page) throw new Damage(`${what}: page ${n} is past the end of the file`);
    const own = page.readBigUInt64LE(0);
    if (own !== pgno) throw new Damage(`${what}: page ${n} says it is page ${own}`);
    const txnid = page.readBigUInt64LE(8);
    if (txnid > meta.txnid) throw new Damage(`${what}: page ${n} was written by transaction ${txnid}, after the snapshot's ${meta.txnid}`);
    return page;
  }

  function overflow(pgno: bigint, size: number, what: string): void {
    const pages = Math.floor((HEADER - 1 + size) / pageSize) + 1;
    const head = pageAt(pgno, what);
    const flags = head.readUInt16LE(FLAGS_OFFSET);
    if ((flags & (P_OVERFLOW | P_BRANCH | P_LEAF | P_META)) !== P_OVERFLOW) throw new Damage(`${what}: page ${pgno} is not an overflow page (flags 0x${flags.toString(16)})`);
    const count = head.readUInt32LE(20);
    if (count < pages) throw new Damage(`${what}: page ${pgno} holds ${count} pages, too few for ${size} bytes`);
    if (pgno + BigInt(count) - 1n > lastPage) throw new Damage(`${what}: it runs past the pages in use`);
    // The pages after the first carry no header of their own: only claimed.
    for (let i = 1; i < count; i++) claim(Number(pgno) + i, what);
  }

  function tree(db: DbRecord, name: string, isMain: boolean): void {
    if (db.root === NO_ROOT) return;
    if (db.depth < 1 || db.depth > MAX_DEPTH) throw new Damage(`${name}: a depth of ${db.depth}`);
    const ordered = (db.flags & (MDB_REVERSEKEY | MDB_INTEGERKEY)) === 0;
    const named: Array<[string, DbRecord]> = [];
    const visit = (pgno: bigint, level: number, what: string): void => {
      const page = pageAt(pgno, what);
      const flags = page.readUInt16LE(FLAGS_OFFSET);
      const kind = flags & (P_BRANCH | P_LEAF | P_OVERFLOW | P_META | P_SUBP);
      const leaf = level === db.depth;
      if (kind !== (leaf ? P_LEAF : P_BRANCH)) {
        throw new Damage(`${what}: page ${pgno} has flags 0x${flags.toString(16)} where a ${leaf ? 'leaf' : 'branch'} page belongs`);
      }
      const lower = page.readUInt16LE(20);
      const upper = page.readUInt16LE(22);
      if (lower % 2 !== 0 || lower > upper || upper > usable) throw new Damage(`${what}: page ${pgno} has bounds ${lower}..${upper} in ${usable} bytes`);
      const keys = lower / 2;
      if (flags & P_LEAF2) {
        // Fixed-size keys packed after the pointers' place; only in sorted duplicates.
        if ((db.flags & MDB_DUPSORT) === 0) throw new Damage(`${what}: page ${pgno} is a page of duplicates in a database without them`);
        return;
      }
      if (!leaf && keys < 1) throw new Damage(`${what}: branch page ${pgno} has no children`);
      let previous: Buffer | null = null;
      for (let i = 0; i < keys; i++) {
        const offset = page.readUInt16LE(HEADER + 2 * i);
        if (offset < upper || offset + NODE_HEADER > usable) throw new Damage(`${what}: page ${pgno} has node ${i} at ${offset}, outside ${upper}..${usable}`);
        const at = HEADER + offset;
        const lo = page.readUInt16LE(at);
        const hi = page.readUInt16LE(at + 2);
        const nodeFlags = page.readUInt16LE(at + 4);
        const keySize = page.readUInt16LE(at + 6);
        const keyEnd = offset + NODE_HEADER + keySize;
        if (keyEnd > usable) throw new Damage(`${what}: page ${pgno} has node ${i} with a key past the page`);
        const key = page.subarray(at + NODE_HEADER, at + NODE_HEADER + keySize);
        // A branch's first key is never compared: LMDB leaves it empty.
        if (ordered && (leaf || i > 0)) {
          if (previous && Buffer.compare(previous, key) >= 0) throw new Damage(`${what}: page ${pgno} has keys out of order at node ${i}`);
          previous = key;
        }
        if (!leaf) {
          const child = BigInt(lo) | (BigInt(hi) << 16n) | (BigInt(nodeFlags) << 32n);
          visit(child, level + 1, what);
          continue;
        }
        const size = lo | (hi << 16);
        if (nodeFlags & ~(F_BIGDATA | F_SUBDATA | F_DUPDATA)) throw new Damage(`${what}: page ${pgno} has node ${i} with flags 0x${nodeFlags.toString(16)}`);
        if (nodeFlags & F_DUPDATA && (db.flags & MDB_DUPSORT) === 0) throw new Damage(`${what}: page ${pgno} has duplicates in a database without them`);
        if (nodeFlags & F_BIGDATA) {
          if (keyEnd + PGNO_BYTES > usable) throw new Damage(`${what}: page ${pgno} has node ${i} with its overflow page past the page`);
          overflow(page.readBigUInt64LE(at + NODE_HEADER + keySize), size, `${what}, an overflow value`);
          continue;
        }
        if (keyEnd + size > usable) throw new Damage(`${what}: page ${pgno} has node ${i} with ${size} bytes of data past the page`);
        if (nodeFlags & F_SUBDATA) {
          if (size !== DB_RECORD) throw new Damage(`${what}: page ${pgno} has a database record of ${size} bytes`);
          const record = dbRecord(page, at + NODE_HEADER + keySize);
          // Sorted duplicates kept as a tree of their own: not used by perch, walked all the same.
          if (nodeFlags & F_DUPDATA) tree(record, `${what}, duplicates`, false);
          else if (isMain) named.push([key.toString('latin1'), record]);
          else throw new Damage(`${what}: page ${pgno} holds a database record outside the main database`);
        }
      }
    };
    visit(db.root, 1, name);
    for (const [dbName, record] of named) tree(record, `database ${JSON.stringify(dbName)}`, false);
  }

  try {
    tree(meta.free, 'the free-page database', false);
    tree(meta.main, 'the main database', true);
    return null;
  } catch (err) {
    if (err instanceof Damage) return err.message;
    // A read past a buffer's end (a size this check did not bound) is damage too.
    if (err instanceof RangeError) return `a page could not be read: ${err.message}`;
    throw err;
  }
}
