// Secrets of this installation (migration 005): made once with the database, shared by every
// thread and process that opens it.
import type { Sqlite } from './sqlite';

export function serverSecret(db: Sqlite, name: 'cursor'): Buffer {
  const row = db.prepare('SELECT value FROM server_secrets WHERE name = ?').get(name) as { value: Buffer } | undefined;
  if (!row) throw new Error(`the database has no ${name} secret: run perch migrate`);
  return row.value;
}
