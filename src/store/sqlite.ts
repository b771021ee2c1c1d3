// The durable store: one SQLite file in WAL mode. Connections sync on commit (synchronous=FULL)
// so that an acknowledged write survives a crash of the process or the machine. The writer
// is the exception: it syncs the log itself, beside its commits, before it answers (wal-sync.ts).
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { MIGRATIONS } from './migrations';

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

export interface AppliedMigration {
  version: number;
  name: string;
}

export function currentSchemaVersion(db: Sqlite): number {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const row = db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null };
  return row.v ?? 0;
}

/**
 * Applies every pending migration, each in its own immediate transaction so that two processes
 * migrating the same file at once cannot both apply one. Idempotent: returns what it applied.
 */
export function migrate(db: Sqlite): AppliedMigration[] {
  currentSchemaVersion(db);
  const applied: AppliedMigration[] = [];
  const isApplied = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?');
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  for (const m of MIGRATIONS) {
    const run = db.transaction(() => {
      if (isApplied.get(m.version)) return false;
      db.exec(m.sql);
      record.run(m.version, m.name, new Date().toISOString());
      return true;
    });
    if (run.immediate()) applied.push({ version: m.version, name: m.name });
  }
  return applied;
}
