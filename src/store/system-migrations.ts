// Schema the server itself needs, whatever its capabilities.
import type { Migration } from '../store/migration';

// Secrets of this installation, made once with the database. `cursor` keys the MAC of list
// cursors (core/cursor.ts): without a secret anyone could compute a valid cursor, and the
// contract accepts only cursors the server issued.
export const serverSecrets: Migration = {
  version: 5,
  name: 'server secrets',
  sql: `
    CREATE TABLE server_secrets (
      name TEXT PRIMARY KEY,
      value BLOB NOT NULL
    );
    INSERT INTO server_secrets (name, value) VALUES ('cursor', randomblob(32));
  `,
};

export const SYSTEM_MIGRATIONS: readonly Migration[] = [serverSecrets];
