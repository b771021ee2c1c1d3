import { openSqlite } from '../store/sqlite';
import { currentSchemaVersion } from '../store/migration';
import { migrateAll } from '../capabilities';
import { existsSync } from 'node:fs';
import { sqlitePath } from '../store/sqlite';
import { announceDataDir, commandConfig, dataDirOf, dataDirPath, type CommonOptions } from './common';

export function migrateCommand(opts: CommonOptions): void {
  commandConfig(opts);
  const created = !existsSync(sqlitePath(dataDirPath(opts)));
  const dir = dataDirOf(opts);
  announceDataDir(dir, { created });
  const db = openSqlite(dir);
  try {
    const applied = migrateAll(db);
    for (const m of applied) process.stdout.write(`applied ${String(m.version).padStart(3, '0')} ${m.name}\n`);
    const version = currentSchemaVersion(db);
    process.stdout.write(applied.length ? `schema is at version ${version}\n` : `nothing to apply; schema is at version ${version}\n`);
  } finally {
    db.close();
  }
}
