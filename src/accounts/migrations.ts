// Schema of users and API keys.
import type { Migration } from '../store/migration';

export const accounts: Migration = {
  version: 1,
  name: 'accounts',
  sql: `
    CREATE TABLE users (
      id TEXT PRIMARY KEY,
      handle TEXT NOT NULL,
      handle_lower TEXT NOT NULL UNIQUE,
      created_at TEXT NOT NULL,
      followers_count INTEGER NOT NULL DEFAULT 0,
      following_count INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE api_keys (
      id TEXT PRIMARY KEY,
      user_id TEXT NOT NULL REFERENCES users(id),
      key_hash TEXT NOT NULL UNIQUE,
      admin INTEGER NOT NULL DEFAULT 0,
      created_at TEXT NOT NULL,
      revoked_at TEXT
    );
    CREATE INDEX api_keys_user ON api_keys(user_id);
  `,
};

export const MIGRATIONS: readonly Migration[] = [accounts];
