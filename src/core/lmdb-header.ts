// The header of an LMDB data file (data.mdb): its first two pages are meta pages, each holding a
// magic number, the file format version and the page size. LMDB reads them before anything else,
// and the bundled build trusts them so far that a zeroed first page crashes the process inside
// mdb_env_open instead of returning MDB_INVALID. Checked here first, from the bytes alone. Pure.
//
// Layout, as the LMDB bundled with lmdb-js 3 writes it (little-endian, 64-bit):
//   page header, 24 bytes: page number (8), txnid (8), pad (2), flags (2), lower/upper (4)
//   meta, right after it: magic (4), version (4), fixed-map address (8), map size (8),
//     then the free-page database record, whose first field (4 bytes) is the page size.
// Meta page 0 is at offset 0, meta page 1 one page further.

export const LMDB_MAGIC = 0xbeefc0de;
/** The data format version of the bundled LMDB (1 for LMDB 0.9; 2 for the 1.0 branch lmdb-js uses). */
export const LMDB_DATA_VERSION = 2;

/** Bytes of every page's header, and where its flags are (lmdb-tree.ts reads the same headers). */
export const PAGE_HEADER_BYTES = 24;
export const FLAGS_OFFSET = 18;
export const P_META = 0x08;
const MAGIC_OFFSET = PAGE_HEADER_BYTES;
const VERSION_OFFSET = PAGE_HEADER_BYTES + 4;
/** Where a meta page's two database records start: the free-page one first. */
export const META_DBS_OFFSET = PAGE_HEADER_BYTES + 24;
/** The page size is the free-page database record's first field. */
const PAGE_SIZE_OFFSET = META_DBS_OFFSET;
/** Bytes of a meta page this check reads. */
const META_BYTES = PAGE_SIZE_OFFSET + 4;
/** LMDB's bounds for a page size. */
const MIN_PAGE_SIZE = 256;
export const MAX_PAGE_SIZE = 0x10000;

/** Bytes to read from the start of data.mdb so that lmdbHeaderProblem sees both meta pages. */
export const LMDB_HEADER_READ_BYTES = MAX_PAGE_SIZE + META_BYTES;

function metaProblem(page: Buffer, index: number): string | null {
  if (page.length < META_BYTES) return `meta page ${index} is cut short`;
  if ((page.readUInt16LE(FLAGS_OFFSET) & P_META) === 0) return `page ${index} is not a meta page`;
  const magic = page.readUInt32LE(MAGIC_OFFSET);
  if (magic !== LMDB_MAGIC) return `meta page ${index} has magic number 0x${magic.toString(16)}, not 0x${LMDB_MAGIC.toString(16)}`;
  // LMDB compares the low 16 bits only; the high ones carry build options.
  const version = page.readUInt32LE(VERSION_OFFSET) & 0xffff;
  if (version !== LMDB_DATA_VERSION) return `meta page ${index} has format version ${version}, not ${LMDB_DATA_VERSION}`;
  return null;
}

function isPageSize(n: number): boolean {
  return n >= MIN_PAGE_SIZE && n <= MAX_PAGE_SIZE && (n & (n - 1)) === 0;
}

/**
 * Why the header of a data file is not one LMDB can open, or null when it is. `head` is the
 * start of the file (LMDB_HEADER_READ_BYTES, or the whole file when shorter); `fileSize` its
 * size. An empty file is a new one, which LMDB initialises.
 */
export function lmdbHeaderProblem(head: Buffer, fileSize: number): string | null {
  if (fileSize === 0) return null;
  const first = metaProblem(head.subarray(0, META_BYTES), 0);
  if (first) return first;
  const pageSize = head.readUInt32LE(PAGE_SIZE_OFFSET);
  if (!isPageSize(pageSize)) return `meta page 0 gives page size ${pageSize}`;
  if (fileSize < 2 * pageSize) return `the file (${fileSize} bytes) is shorter than its two meta pages of ${pageSize} bytes`;
  const second = metaProblem(head.subarray(pageSize, pageSize + META_BYTES), 1);
  if (second) return second;
  const secondPageSize = head.readUInt32LE(pageSize + PAGE_SIZE_OFFSET);
  if (secondPageSize !== pageSize) return `the meta pages disagree on the page size (${pageSize}, ${secondPageSize})`;
  return null;
}

/** The page size a header gives (one lmdbHeaderProblem accepted). */
export function lmdbPageSize(head: Buffer): number {
  return head.readUInt32LE(PAGE_SIZE_OFFSET);
}
