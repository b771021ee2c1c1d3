// The SQL of backups: what a snapshot holds, table by table.
import type { Sqlite } from '../store/sqlite';

/** Rows per table of the database (SQLite's own tables left out), by table name. */
export function tableRowCounts(db: Sqlite): Record<string, number> {
  const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all() as string[];
  const counts: Record<string, number> = {};
  for (const name of names) counts[name] = db.prepare(`SELECT COUNT(*) FROM "${name.replace(/"/g, '""')}"`).pluck().get() as number;
  return counts;
}

/** SQLite's own check of the file: "ok", or the first problem it found. */
export function quickCheck(db: Sqlite): string {
  return String(db.pragma('quick_check', { simple: true }));
}
