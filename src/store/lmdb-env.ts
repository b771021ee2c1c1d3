// How every process and thread of perch opens the hot store's LMDB environment, and what tells
// damage in it: apart from store/lmdb.ts, so that the probe that reads a whole environment in a
// child process (lmdb-probe.ts) loads lmdb-js alone, not SQLite and the rest of the stores.
import { open, type Database, type Key, type RootDatabase } from 'lmdb';

export type LmdbDb<V = unknown, K extends Key = Key> = Database<V, K>;

/**
 * The map is reserved once at its full size (address space only: the file grows as pages are
 * used). lmdb-js otherwise starts with a small map and maps the file again each time it outgrows
 * it, keeping the older, overlapping mappings: every page then counts once per mapping in the
 * process's resident set. Past this size lmdb-js still grows the map on its own.
 */
const MAP_SIZE_BYTES = 1024 * 1024 * 1024;

const ENV_OPTIONS = { maxDbs: 64, noSync: true, compression: false, mapSize: MAP_SIZE_BYTES } as const;

/** Opens the environment with the options every process and thread of perch uses. */
export function openRoot(path: string): RootDatabase {
  return open({ path, ...ENV_OPTIONS });
}

/**
 * LMDB's answers for a file it cannot make sense of (lmdb.h). Two name misuse in general
 * (BAD_TXN, BAD_VALSIZE), but the probes only read and write one small value: from them, these
 * come of garbage pages (a node's flags, a size).
 */
const DAMAGE_ERRORS: ReadonlySet<number> = new Set([
  -30797, // MDB_PAGE_NOTFOUND
  -30796, // MDB_CORRUPTED
  -30795, // MDB_PANIC
  -30794, // MDB_VERSION_MISMATCH
  -30793, // MDB_INVALID
  -30787, // MDB_CURSOR_FULL
  -30786, // MDB_PAGE_FULL
  -30782, // MDB_BAD_TXN
  -30781, // MDB_BAD_VALSIZE
  -30779, // MDB_PROBLEM
  -30778, // MDB_BAD_CHECKSUM
]);

/** Exit code of the probe (lmdb-probe.ts) when LMDB reported damage. */
export const PROBE_FOUND_DAMAGE = 3;

export function isLmdbDamageError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' && DAMAGE_ERRORS.has(code);
}

/** How the probe (lmdb-probe.ts) starts the line that reports damage, before it exits. */
export const PROBE_DAMAGE_LINE = 'damaged: ';

const MDB_INCOMPATIBLE = -30784;

/**
 * Every named database, opened to read bytes (never decoded, so that garbage values cannot fail
 * a probe). A key of the main database that is not a database (LMDB answers MDB_INCOMPATIBLE to
 * opening it as one) is skipped: it is a value someone put there, not damage.
 */
export function* namedDatabases(root: RootDatabase): Generator<LmdbDb<Buffer>> {
  for (const name of root.getKeys()) {
    let db: LmdbDb<Buffer> | undefined;
    try {
      db = root.openDB<Buffer>({ name: String(name), compression: false, encoding: 'binary' });
    } catch (err) {
      if ((err as { code?: unknown }).code === MDB_INCOMPATIBLE) continue;
      throw err;
    }
    if (db) yield db;
  }
}
