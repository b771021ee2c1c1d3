import type { Migration } from './index';

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
