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

export function openSqlite(dataDir: string, opts: { readonly?: boolean } = {}): Sqlite {
  const db = new Database(sqlitePath(dataDir), { readonly: opts.readonly ?? false, fileMustExist: opts.readonly ?? false });
  db.pragma('busy_timeout = 10000');
  if (!opts.readonly) {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
  }
  db.pragma('foreign_keys = ON');
  return db;
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
