// Schema of the short-link service. Released migrations are never edited; a change is a new one.
import type { Migration } from '../store/migration';

// Short links, the register of every code ever minted, click aggregates and anomaly flags.
// `id` is a snowflake (time-sortable) used to list a user's links newest first; `expires_ms`
// mirrors `expires_at` for range queries; `domain` is the target's registrable domain, read by
// the anomaly detector. `issued_codes` is what keeps the pool generator from minting a code twice:
// a code enters the pool only if its insert here succeeded, and it is never removed.
export const links: Migration = {
  version: 2,
  name: 'links',
  sql: `
    CREATE TABLE issued_codes (
      code TEXT PRIMARY KEY
    ) WITHOUT ROWID;
    CREATE TABLE links (
      code TEXT PRIMARY KEY,
      id INTEGER NOT NULL UNIQUE,
      owner_id TEXT NOT NULL REFERENCES users(id),
      url TEXT NOT NULL,
      domain TEXT NOT NULL,
      created_at TEXT NOT NULL,
      created_ms INTEGER NOT NULL,
      updated_at TEXT NOT NULL,
      expires_at TEXT,
      expires_ms INTEGER,
      retired_at TEXT
    ) WITHOUT ROWID;
    CREATE INDEX links_owner ON links(owner_id, id);
    CREATE INDEX links_created ON links(created_ms);
    CREATE INDEX links_expiry ON links(expires_ms) WHERE expires_ms IS NOT NULL AND retired_at IS NULL;
    CREATE TABLE link_clicks_daily (
      code TEXT NOT NULL,
      day TEXT NOT NULL,
      clicks INTEGER NOT NULL DEFAULT 0,
      bots INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (code, day)
    ) WITHOUT ROWID;
    CREATE TABLE link_clicks_minute (
      code TEXT NOT NULL,
      minute INTEGER NOT NULL,
      clicks INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (code, minute)
    ) WITHOUT ROWID;
    CREATE INDEX link_clicks_minute_age ON link_clicks_minute(minute);
    CREATE TABLE link_referrers (
      code TEXT NOT NULL,
      referrer TEXT NOT NULL,
      clicks INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (code, referrer)
    ) WITHOUT ROWID;
    CREATE TABLE link_click_totals (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      events INTEGER NOT NULL DEFAULT 0
    );
    INSERT INTO link_click_totals (id, events) VALUES (1, 0);
    CREATE TABLE account_flags (
      user_id TEXT PRIMARY KEY REFERENCES users(id),
      reason TEXT NOT NULL,
      flagged_at TEXT NOT NULL,
      flagged_ms INTEGER NOT NULL,
      until_ms INTEGER NOT NULL,
      cleared_at TEXT,
      cleared_ms INTEGER
    );
  `,
};

// Where the click drain stands (links/clicks.ts): the queue keys of the batch it is committing,
// in how many parts of at most how many links, and how many of them are committed. Each part's transaction updates it, so a
// drain that a crash interrupted resumes after the last committed part instead of counting the
// whole batch again.
export const clickDrain: Migration = {
  version: 6,
  name: 'click drain progress',
  sql: `
    CREATE TABLE click_drain (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      keys TEXT NOT NULL,
      parts INTEGER NOT NULL,
      part_links INTEGER NOT NULL,
      done INTEGER NOT NULL
    );
  `,
};

// Aliases, password links, browser and OS families, and imports.
// - `password_hash`: a protected link's scrypt hash (core/password.ts); NULL when it has none.
// - `imported_clicks`, `imported_bots`: visit totals an import brought from another shortener,
//   counted in the details' totals; `origin`: the import format of an imported link, NULL for a
//   link created through the API (the anomaly detector looks only at those).
// - `deleted_codes`: when each deleted link's code was freed. An alias may take a code only once
//   links.alias_reuse_days have passed since; links deleted before this migration left no record,
//   so their codes stay taken.
// - `link_browsers`, `link_os`: people's clicks by browser and OS family (never the User-Agent).
// - `link_imports`: the entries each user imported, by source and the entry's identity there, so
//   that running the same file again imports nothing twice.
export const linkFeatures: Migration = {
  version: 9,
  name: 'link aliases, passwords, families and imports',
  sql: `
    ALTER TABLE links ADD COLUMN password_hash TEXT;
    ALTER TABLE links ADD COLUMN imported_clicks INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE links ADD COLUMN imported_bots INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE links ADD COLUMN origin TEXT;
    CREATE TABLE deleted_codes (
      code TEXT PRIMARY KEY,
      deleted_ms INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE link_browsers (
      code TEXT NOT NULL,
      name TEXT NOT NULL,
      clicks INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (code, name)
    ) WITHOUT ROWID;
    CREATE TABLE link_os (
      code TEXT NOT NULL,
      name TEXT NOT NULL,
      clicks INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (code, name)
    ) WITHOUT ROWID;
    CREATE TABLE link_imports (
      owner_id TEXT NOT NULL,
      source TEXT NOT NULL,
      source_key TEXT NOT NULL,
      code TEXT NOT NULL,
      imported_at TEXT NOT NULL,
      PRIMARY KEY (owner_id, source, source_key)
    ) WITHOUT ROWID;
  `,
};

export const MIGRATIONS: readonly Migration[] = [links, clickDrain, linkFeatures];
