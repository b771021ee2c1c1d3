import { openSqlite } from '../store/sqlite';
import { currentSchemaVersion } from '../store/migration';
import { migrateAll } from '../capabilities';
import { commandConfig, dataDirOf, type CommonOptions } from './common';

export function migrateCommand(opts: CommonOptions): void {
  commandConfig(opts);
  const db = openSqlite(dataDirOf(opts));
  try {
    const applied = migrateAll(db);
    for (const m of applied) process.stdout.write(`applied ${String(m.version).padStart(3, '0')} ${m.name}\n`);
    const version = currentSchemaVersion(db);
    process.stdout.write(applied.length ? `schema is at version ${version}\n` : `nothing to apply; schema is at version ${version}\n`);
  } finally {
    db.close();
  }
}
