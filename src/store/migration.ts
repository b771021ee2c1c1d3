// Versioned schema migrations, applied in order and recorded in schema_migrations. Each
// capability brings its own (capability.ts); versions are one sequence for the whole database, so
// a new migration takes the next free number whichever capability it belongs to. A released
// migration is never edited; a change of schema is a new entry.
import type { Sqlite } from './sqlite';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The migrations of several modules as one list in version order; a version used twice throws. */
export function migrationList(...groups: ReadonlyArray<readonly Migration[]>): Migration[] {
  const all = groups.flat().sort((a, b) => a.version - b.version);
  for (let i = 1; i < all.length; i++) {
    if (all[i].version === all[i - 1].version) throw new Error(`two migrations have version ${all[i].version}: ${all[i - 1].name}, ${all[i].name}`);
  }
  return all;
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
export function migrate(db: Sqlite, migrations: readonly Migration[]): AppliedMigration[] {
  currentSchemaVersion(db);
  const applied: AppliedMigration[] = [];
  const isApplied = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?');
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
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
