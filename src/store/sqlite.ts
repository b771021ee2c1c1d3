// The durable store: one SQLite file in WAL mode. Connections sync on commit (synchronous=FULL)
// so that an acknowledged write survives a crash of the process or the machine. The writer
// is the exception: it syncs the log itself, beside its commits, before it answers (wal-sync.ts).
import Database from 'better-sqlite3';
import { join } from 'node:path';

export type Sqlite = Database.Database;

export function sqlitePath(dataDir: string): string {
  return join(dataDir, 'perch.db');
}

export function walPath(dataDir: string): string {
  return sqlitePath(dataDir) + '-wal';
}

/** How long a connection waits for another's lock before SQLite answers SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 10_000;
/** How long a WAL switch that met another process's switch waits before it tries again. */
const WAL_SWITCH_RETRY_MS = 5;
/** What a WAL switch sleeps on between its tries (Atomics.wait on a value that never changes). */
const WAL_SWITCH_PAUSE = new Int32Array(new SharedArrayBuffer(4));

export function openSqlite(dataDir: string, opts: { readonly?: boolean } = {}): Sqlite {
  const db = new Database(sqlitePath(dataDir), { readonly: opts.readonly ?? false, fileMustExist: opts.readonly ?? false });
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  if (!opts.readonly) {
    switchToWal(db, BUSY_TIMEOUT_MS);
    db.pragma('synchronous = FULL');
  }
  db.pragma('foreign_keys = ON');
  return db;
}

/**
 * Puts the database in WAL mode (a no-op once it is). On a new file the switch is a write made in
 * rollback-journal mode, and when several processes open the file at once (a server starting
 * beside `perch keygen`), one can hold the read lock of its own switch while another holds the
 * write lock of its: SQLite then answers the first SQLITE_BUSY at once, without its busy handler,
 * since waiting there could deadlock. The first lets its read lock go and tries again, until the
 * connection's busy timeout has passed. (search.db is switched the same way.)
 */
export function switchToWal(db: Sqlite, busyTimeoutMs: number): void {
  const deadline = Date.now() + busyTimeoutMs;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if (!isBusy(err) || Date.now() >= deadline) throw err;
      Atomics.wait(WAL_SWITCH_PAUSE, 0, 0, WAL_SWITCH_RETRY_MS);
    }
  }
}

/**
 * SQLite's answer when another connection holds the lock asked for, after the connection's busy
 * timeout (none for the writer's, a long one for the hot store's open lock).
 */
export function isBusy(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'SQLITE_BUSY';
}

/** Whether the database answers a query that reads it (readiness, GET /readyz). */
export function answersQuery(db: Sqlite): boolean {
  try {
    db.prepare('SELECT COUNT(*) FROM schema_migrations').pluck().get();
    return true;
  } catch {
    return false;
  }
}

/**
 * SQL for the lowest and highest `column` of `table`, an indexed column: two look-ups at the
 * ends of its index, whatever the table's length. Each is a subquery of its own because SQLite
 * answers a lone MIN or MAX from the end of the index, but MIN and MAX in one SELECT read every row.
 */
export function endsSql(table: string, column: string): string {
  return `SELECT (SELECT MIN(${column}) FROM ${table}), (SELECT MAX(${column}) FROM ${table})`;
}

/**
 * SQL for how many rows `table` holds when its `column` is a contiguous range of integers (rows
 * leave only from the low end and numbers are never reused), from the ends alone as endsSql; 0
 * when it is empty.
 */
export function spanSql(table: string, column: string): string {
  return `SELECT COALESCE((SELECT MAX(${column}) FROM ${table}) - (SELECT MIN(${column}) FROM ${table}) + 1, 0)`;
}
