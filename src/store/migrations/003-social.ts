import type { Migration } from './index';

// Posts, media, follows and likes, and the `events` outbox that background work consumes.
// Post ids are 64-bit snowflakes stored as INTEGER (so they sort numerically) and always read
// back as text. Follows carry `since_id`, an id minted when the follow was made: only the
// followee's posts above it belong in the follower's home timeline (a follow does not backfill).
export const social: Migration = {
  version: 3,
  name: 'social',
  sql: `
    CREATE TABLE media (
      id TEXT PRIMARY KEY,
      owner_id TEXT NOT NULL REFERENCES users(id),
      content_type TEXT NOT NULL,
      size INTEGER NOT NULL,
      created_at TEXT NOT NULL
    );
    CREATE TABLE posts (
      id INTEGER PRIMARY KEY,
      author_id TEXT NOT NULL REFERENCES users(id),
      text TEXT NOT NULL,
      media_ids TEXT NOT NULL DEFAULT '[]',
      reply_to INTEGER,
      created_at TEXT NOT NULL,
      deleted_at TEXT,
      like_count INTEGER NOT NULL DEFAULT 0,
      reply_count INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX posts_author ON posts(author_id, id);
    CREATE INDEX posts_reply_to ON posts(reply_to) WHERE reply_to IS NOT NULL;
    CREATE TABLE follows (
      follower_id TEXT NOT NULL REFERENCES users(id),
      followee_id TEXT NOT NULL REFERENCES users(id),
      since_id INTEGER NOT NULL,
      created_at TEXT NOT NULL,
      PRIMARY KEY (follower_id, followee_id)
    ) WITHOUT ROWID;
    CREATE INDEX follows_followee ON follows(followee_id, since_id);
    CREATE INDEX follows_follower ON follows(follower_id, since_id);
    CREATE TABLE likes (
      post_id INTEGER NOT NULL,
      user_id TEXT NOT NULL REFERENCES users(id),
      created_at TEXT NOT NULL,
      PRIMARY KEY (post_id, user_id)
    ) WITHOUT ROWID;
    CREATE TABLE events (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      type TEXT NOT NULL,
      actor_id TEXT,
      recipient_id TEXT,
      post_id TEXT,
      payload TEXT NOT NULL DEFAULT '{}',
      created_at TEXT NOT NULL
    );
    -- Authors whose posts fan-out has ever left to the pull path. They stay pulled at read time
    -- even when their follower count drops below the threshold, so no such post goes missing.
    CREATE TABLE pull_authors (
      author_id TEXT PRIMARY KEY REFERENCES users(id),
      marked_at TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE event_consumers (
      name TEXT PRIMARY KEY,
      last_seq INTEGER NOT NULL,
      updated_at TEXT NOT NULL
    );
  `,
};
