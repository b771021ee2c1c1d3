// Schema of notifications and Web Push. Released migrations are never edited.
import type { Migration } from '../store/migration';

// - notifications: one row per notification. `seq` orders a recipient's rows by their latest
//   activity; it comes from notification_counter and moves on every change (a new row, or an
//   actor joining one), never on a read. `actor_ids` is a JSON array, newest first, capped
//   (core/notifications.ts); notification_actors holds every actor, so that none counts twice.
// - notification_moves: each change of an existing row, with the `seq` it had before. A list's
//   cursor names the `seq` of the newest change when its first page was read, and the moves
//   since then tell where the rows that moved were at that moment: pages after the first show
//   the list as it was, so a row that moves while someone pages is neither skipped nor repeated
//   (store.ts, page).
// - The consumer's positions start at the newest event: actions made before notifications
//   existed make none.
export const notifications: Migration = {
  version: 7,
  name: 'notifications',
  sql: `
    CREATE TABLE notifications (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      recipient_id TEXT NOT NULL,
      type TEXT NOT NULL,
      post_id INTEGER,
      actor_ids TEXT NOT NULL,
      actor_count INTEGER NOT NULL,
      priority INTEGER NOT NULL DEFAULT 0,
      read INTEGER NOT NULL DEFAULT 0,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      seq INTEGER NOT NULL
    );
    CREATE UNIQUE INDEX notifications_by_recipient ON notifications(recipient_id, seq);
    CREATE INDEX notifications_by_key ON notifications(recipient_id, type, post_id, created_at) WHERE priority = 0;
    CREATE INDEX notifications_priority ON notifications(recipient_id, type, post_id, created_at) WHERE priority = 1;
    CREATE INDEX notifications_by_post ON notifications(post_id) WHERE post_id IS NOT NULL;
    CREATE INDEX notifications_unread ON notifications(recipient_id) WHERE read = 0;
    CREATE TABLE notification_actors (
      notification_id INTEGER NOT NULL,
      actor_id TEXT NOT NULL,
      PRIMARY KEY (notification_id, actor_id)
    ) WITHOUT ROWID;
    CREATE TABLE notification_moves (
      seq INTEGER PRIMARY KEY,
      notification_id INTEGER NOT NULL,
      recipient_id TEXT NOT NULL,
      from_seq INTEGER NOT NULL,
      at TEXT NOT NULL
    );
    CREATE INDEX notification_moves_by_recipient ON notification_moves(recipient_id, seq);
    CREATE TABLE notification_counter (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      seq INTEGER NOT NULL
    );
    INSERT INTO notification_counter (id, seq) VALUES (1, 0);
    CREATE TABLE notification_preferences (
      user_id TEXT PRIMARY KEY REFERENCES users(id),
      muted_post_ids TEXT NOT NULL,
      priority_user_ids TEXT NOT NULL,
      types TEXT NOT NULL,
      updated_at TEXT NOT NULL
    );
    CREATE TABLE push_subscriptions (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      user_id TEXT NOT NULL REFERENCES users(id),
      endpoint TEXT NOT NULL UNIQUE,
      p256dh TEXT NOT NULL,
      auth TEXT NOT NULL,
      created_at TEXT NOT NULL
    );
    CREATE INDEX push_subscriptions_by_user ON push_subscriptions(user_id);
    INSERT INTO event_consumers (name, last_seq, updated_at)
      SELECT name, COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0), strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
      FROM (SELECT 'notifications' AS name UNION ALL SELECT 'notification_delivery');
  `,
};

// The API key each push subscription was registered with, so that revoking the key (a lost
// device) stops the pushes to that device too (`perch keys revoke`). Subscriptions made before
// have none: revoking any key of their user forgets them (cli/keys.ts).
export const subscriptionKeys: Migration = {
  version: 11,
  name: 'push subscription keys',
  sql: `
    ALTER TABLE push_subscriptions ADD COLUMN key_id TEXT;
    CREATE INDEX push_subscriptions_by_key ON push_subscriptions(key_id) WHERE key_id IS NOT NULL;
  `,
};

// A priority actor's like or follow again after an unlike or unfollow once made no row, and this
// index found that actor's earlier priority row with the same key; each priority action now makes
// a row of its own (core/notifications.ts, decide), and nothing reads priority rows by key.
export const dropPriorityKeyIndex: Migration = {
  version: 14,
  name: 'notifications: drop the priority rows by key',
  sql: `
    DROP INDEX IF EXISTS notifications_priority;
  `,
};

export const MIGRATIONS: readonly Migration[] = [notifications, subscriptionKeys, dropPriorityKeyIndex];
