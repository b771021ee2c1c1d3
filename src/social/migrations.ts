// Schema of the microblog. Migration 3 also made the media table (media/) and the outbox tables
// (outbox/), which those modules own now. Released migrations are never edited.
import type { Migration } from '../store/migration';

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

// An author's posts by id, kept in a table of its own instead of an index on `posts`. An index
// entry lands in its author's part of the tree, so a group commit of posts by many authors
// dirtied one index page per post, and every dirtied page is a frame in the write-ahead log:
// that index alone cost as much as the rest of the post's insert. The writer now fills
// `author_posts` from the outbox (post_created events) a few milliseconds after the commit, for
// many posts at once; readers take posts past the `author_index` position from the outbox
// itself (social/store.ts), so a post is listed under its author as soon as it is committed.
export const authorIndex: Migration = {
  version: 4,
  name: 'author index',
  sql: `
    CREATE TABLE author_posts (
      author_id TEXT NOT NULL,
      id INTEGER NOT NULL,
      PRIMARY KEY (author_id, id)
    ) WITHOUT ROWID;
    INSERT INTO author_posts (author_id, id) SELECT author_id, id FROM posts ORDER BY author_id, id;
    DROP INDEX posts_author;
    INSERT INTO event_consumers (name, last_seq, updated_at)
      SELECT 'author_index', COALESCE(MAX(seq), 0), strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM events;
  `,
};

// Which posts carry each media file, so that a file whose every post is deleted is no longer
// served (media/service.ts): `posts.media_ids` holds the same as JSON, which no index reaches.
// Filled from the posts as they stand, deleted ones included.
export const postMedia: Migration = {
  version: 10,
  name: 'post media',
  sql: `
    CREATE TABLE post_media (
      media_id TEXT NOT NULL,
      post_id INTEGER NOT NULL,
      PRIMARY KEY (media_id, post_id)
    ) WITHOUT ROWID;
    INSERT OR IGNORE INTO post_media (media_id, post_id)
      SELECT j.value, p.id FROM posts p, json_each(p.media_ids) j WHERE p.media_ids <> '[]';
  `,
};

export const MIGRATIONS: readonly Migration[] = [social, authorIndex, postMedia];
