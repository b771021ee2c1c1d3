// Persistence of the microblog in SQLite: posts, media metadata, follows, likes and the `events`
// outbox. Post ids are INTEGER columns bound as bigint and read back as text (CAST), because a
// 64-bit id does not fit a JavaScript number.
import type { Statement } from 'better-sqlite3';
import type { Sqlite } from '../store/sqlite';
import type { Post } from './writes';
import { AUTHOR_INDEX_CONSUMER, FANOUT_CONSUMER, OutboxCursor } from './outbox-cursor';

export interface PostRow {
  id: string;
  author_id: string;
  text: string;
  media_ids: string;
  reply_to: string | null;
  created_at: string;
  like_count: number;
  reply_count: number;
}

/** A post_created event of the outbox: its sequence number, the post's author and id. */
export type UnfannedPost = [seq: number, authorId: string, id: bigint];

/** The API fields of a stored post; media ids are stored as a JSON array. */
export function postFields(row: PostRow): Post {
  return {
    id: row.id,
    text: row.text,
    author_id: row.author_id,
    media_ids: JSON.parse(row.media_ids) as string[],
    reply_to: row.reply_to,
    created_at: row.created_at,
  };
}

export interface TimelineRow extends PostRow {
  handle: string;
}

export interface FolloweeRow {
  id: string;
  since: string;
  followers_count: number;
  /** 1 when fan-out has ever left one of this author's posts to the pull path. */
  pulled: number;
}

export interface UserListRow {
  id: string;
  handle: string;
  created_at: string;
  followers_count: number;
  following_count: number;
  since: string;
}

export interface EventRow {
  seq: number;
  type: string;
  actor_id: string | null;
  recipient_id: string | null;
  post_id: string | null;
  payload: string;
  created_at: string;
}

/** The columns a new post and a new event are inserted with, one row's placeholders for either. */
const POST_INSERT = 'posts (id, author_id, text, media_ids, reply_to, created_at)';
const EVENT_INSERT = 'events (type, actor_id, recipient_id, post_id, payload, created_at)';
const ROW = '(?, ?, ?, ?, ?, ?)';
/** Rows per statement of insertPlainPosts: 6 values each, well under SQLite's 32,766 variables. */
const MULTI_ROW_INSERT = 32;
/** The payload `event` writes for a post that replies to nothing. */
const PLAIN_POST_PAYLOAD = JSON.stringify({ reply_to: null });

export type EventType = 'post_created' | 'post_deleted' | 'like' | 'unlike' | 'reply' | 'follow' | 'unfollow';

const POST_COLUMNS =
  'CAST(p.id AS TEXT) AS id, p.author_id, p.text, p.media_ids, CAST(p.reply_to AS TEXT) AS reply_to, p.created_at, p.like_count, p.reply_count';

/** SQL for an outbox consumer's position: the last event it processed, 0 before its first. */
function positionOf(consumer: string): string {
  return `COALESCE((SELECT last_seq FROM event_consumers WHERE name = '${consumer}'), 0)`;
}

/** SQL for the filing position: every post_created event up to it is in `author_posts`. */
const FILING_POSITION = positionOf(AUTHOR_INDEX_CONSUMER);

/** True when some post was created after the last filing under authors (a crash can leave such). */
export function hasUnfiledPosts(db: Sqlite): boolean {
  return (
    db
      .prepare(`SELECT EXISTS (SELECT 1 FROM events WHERE type = 'post_created' AND seq > ${FILING_POSITION})`)
      .pluck()
      .get() === 1
  );
}

/**
 * SQL for the ids of an author's (`@author`) posts below `before` (and above `after`): the newest
 * `@limit` live ones filed in `author_posts`, plus every post of the author's that was created
 * after the filing position, read from the outbox. One statement, so both parts come from the
 * same snapshot, in which the filing and its position were committed together.
 */
function authorPostIds(before: string, after?: string): string {
  const above = after ? ` AND a.id > ${after}` : '';
  return `SELECT id FROM (
      SELECT a.id FROM author_posts a JOIN posts f ON f.id = a.id
      WHERE a.author_id = @author AND a.id < ${before}${above} AND f.deleted_at IS NULL ORDER BY a.id DESC LIMIT @limit)
    UNION ALL
    SELECT CAST(e.post_id AS INTEGER) FROM events e
    WHERE e.seq > ${FILING_POSITION} AND e.type = 'post_created' AND e.actor_id = @author`;
}

export class SocialStore {
  private readonly s: Record<string, Statement>;
  private readonly multiRowInserts = new Map<string, Statement>();
  /** Outbox consumers' positions by name, made as they are first needed. */
  private readonly consumers = new Map<string, OutboxCursor>();
  /** Where the filing of posts under their authors stands in the outbox. */
  private readonly filing: OutboxCursor;

  constructor(readonly db: Sqlite) {
    this.filing = this.consumer(AUTHOR_INDEX_CONSUMER);
    const q = (sql: string) => db.prepare(sql);
    this.s = {
      insertPost: q(`INSERT INTO ${POST_INSERT} VALUES ${ROW}`),
      livePost: q(`SELECT ${POST_COLUMNS} FROM posts p WHERE p.id = ? AND p.deleted_at IS NULL`),
      postAuthor: q('SELECT author_id, CAST(reply_to AS TEXT) AS reply_to, deleted_at FROM posts WHERE id = ?'),
      softDelete: q('UPDATE posts SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL'),
      incReplies: q('UPDATE posts SET reply_count = reply_count + 1 WHERE id = ?'),
      decReplies: q('UPDATE posts SET reply_count = reply_count - 1 WHERE id = ? AND reply_count > 0'),
      mediaOwner: q('SELECT owner_id FROM media WHERE id = ?'),
      insertMedia: q('INSERT INTO media (id, owner_id, content_type, size, created_at) VALUES (?, ?, ?, ?, ?)'),
      media: q('SELECT id, owner_id, content_type, size, created_at FROM media WHERE id = ?'),
      insertLike: q('INSERT OR IGNORE INTO likes (post_id, user_id, created_at) VALUES (?, ?, ?)'),
      deleteLike: q('DELETE FROM likes WHERE post_id = ? AND user_id = ?'),
      incLikes: q('UPDATE posts SET like_count = like_count + 1 WHERE id = ?'),
      decLikes: q('UPDATE posts SET like_count = like_count - 1 WHERE id = ? AND like_count > 0'),
      insertFollow: q('INSERT OR IGNORE INTO follows (follower_id, followee_id, since_id, created_at) VALUES (?, ?, ?, ?)'),
      deleteFollow: q('DELETE FROM follows WHERE follower_id = ? AND followee_id = ?'),
      addFollowing: q('UPDATE users SET following_count = following_count + ? WHERE id = ?'),
      addFollowers: q('UPDATE users SET followers_count = followers_count + ? WHERE id = ?'),
      advanceConsumer: q(
        'INSERT INTO event_consumers (name, last_seq, updated_at) VALUES (?, ?, ?) ON CONFLICT(name) DO UPDATE SET last_seq = excluded.last_seq, updated_at = excluded.updated_at',
      ),
      insertEvent: q(`INSERT INTO ${EVENT_INSERT} VALUES ${ROW}`),
      // The oldest `limit` events at or below the bound, up to the last of them made before the
      // cutoff. Events are numbered as they commit and dated as their request ran, a few
      // milliseconds apart at most, so this is the prefix older than the cutoff, give or take.
      pruneEvents: q(
        `DELETE FROM events WHERE seq <= (
           SELECT MAX(seq) FROM (SELECT seq, created_at FROM events WHERE seq <= @upTo ORDER BY seq LIMIT @limit)
           WHERE created_at < @before)`,
      ),
      authorPage: q(
        `SELECT ${POST_COLUMNS} FROM posts p WHERE p.id IN (${authorPostIds('@before')})
         AND p.id < @before AND p.deleted_at IS NULL ORDER BY p.id DESC LIMIT @limit`,
      ),
      authorIdsBetween: q(
        `SELECT CAST(p.id AS TEXT) AS id FROM posts p WHERE p.id IN (${authorPostIds('@before', '@after')})
         AND p.id > @after AND p.id < @before AND p.deleted_at IS NULL ORDER BY p.id DESC LIMIT @limit`,
      ),
      indexAuthorPosts: q(
        `INSERT OR IGNORE INTO author_posts (author_id, id)
         SELECT actor_id, CAST(post_id AS INTEGER) FROM events WHERE seq > ? AND seq <= ? AND type = 'post_created' ORDER BY 1, 2`,
      ),
      followees: q(
        `SELECT f.followee_id AS id, CAST(f.since_id AS TEXT) AS since, u.followers_count, pa.author_id IS NOT NULL AS pulled
         FROM follows f JOIN users u ON u.id = f.followee_id LEFT JOIN pull_authors pa ON pa.author_id = f.followee_id
         WHERE f.follower_id = ?`,
      ),
      followersPage: q(
        `SELECT u.id, u.handle, u.created_at, u.followers_count, u.following_count, CAST(f.since_id AS TEXT) AS since
         FROM follows f JOIN users u ON u.id = f.follower_id WHERE f.followee_id = ? AND f.since_id < ? ORDER BY f.since_id DESC LIMIT ?`,
      ),
      followingPage: q(
        `SELECT u.id, u.handle, u.created_at, u.followers_count, u.following_count, CAST(f.since_id AS TEXT) AS since
         FROM follows f JOIN users u ON u.id = f.followee_id WHERE f.follower_id = ? AND f.since_id < ? ORDER BY f.since_id DESC LIMIT ?`,
      ),
      // Position and events in one statement, so both come from the same snapshot; the position's
      // row comes back even when no event follows it.
      unfannedPostsAfter: db
        .prepare(
          `WITH position (last_seq) AS (SELECT ${positionOf(FANOUT_CONSUMER)})
           SELECT position.last_seq, e.seq, e.actor_id, CAST(e.post_id AS INTEGER) FROM position
           LEFT JOIN events e ON e.seq > MAX(?, position.last_seq) AND e.type = 'post_created' ORDER BY e.seq`,
        )
        .raw()
        .safeIntegers(true),
      // Two plain statements: the table-valued pragma_data_version() costs more than both together.
      dataVersion: db.prepare('PRAGMA data_version').pluck(),
      totalChanges: db.prepare('SELECT total_changes()').pluck(),
      liveCounts: db
        .prepare('SELECT CAST(id AS TEXT), like_count, reply_count FROM posts WHERE id IN (SELECT value FROM json_each(?)) AND deleted_at IS NULL')
        .raw(),
      hydrate: q(
        `SELECT ${POST_COLUMNS}, u.handle FROM posts p JOIN users u ON u.id = p.author_id
         WHERE p.id IN (SELECT value FROM json_each(?)) AND p.deleted_at IS NULL`,
      ),
    };
  }

  /**
   * Inserts posts without media or parent, each with its `post_created` event, in as few
   * statements as possible: the same rows as insertPost and event would write one at a time, for
   * ~1.5 us less per post (a statement call and its bindings per row were a quarter of the
   * writer's time). Events follow the order of `posts`.
   */
  insertPlainPosts(posts: ReadonlyArray<{ id: bigint; authorId: string; text: string; createdAt: string }>): void {
    for (let from = 0; from < posts.length; from += MULTI_ROW_INSERT) {
      const rows = Math.min(MULTI_ROW_INSERT, posts.length - from);
      const postValues: unknown[] = [];
      const eventValues: unknown[] = [];
      for (let i = from; i < from + rows; i++) {
        const p = posts[i];
        postValues.push(p.id, p.authorId, p.text, '[]', null, p.createdAt);
        eventValues.push('post_created', p.authorId, null, p.id.toString(), PLAIN_POST_PAYLOAD, p.createdAt);
      }
      this.multiRow('posts', rows).run(postValues);
      this.multiRow('events', rows).run(eventValues);
    }
  }

  /** The INSERT of `rows` posts or events, prepared once per row count. */
  private multiRow(table: 'posts' | 'events', rows: number): Statement {
    const key = `${table}:${rows}`;
    let statement = this.multiRowInserts.get(key);
    if (!statement) {
      statement = this.db.prepare(`INSERT INTO ${table === 'posts' ? POST_INSERT : EVENT_INSERT} VALUES ${Array(rows).fill(ROW).join(', ')}`);
      this.multiRowInserts.set(key, statement);
    }
    return statement;
  }

  insertPost(id: bigint, authorId: string, text: string, mediaIds: string[], replyTo: bigint | null, createdAt: string): void {
    this.s.insertPost.run(id, authorId, text, JSON.stringify(mediaIds), replyTo, createdAt);
  }

  livePost(id: bigint): PostRow | undefined {
    return this.s.livePost.get(id) as PostRow | undefined;
  }

  /** Author and parent of a post, deleted or not. */
  postAuthor(id: bigint): { author_id: string; reply_to: string | null; deleted_at: string | null } | undefined {
    return this.s.postAuthor.get(id) as { author_id: string; reply_to: string | null; deleted_at: string | null } | undefined;
  }

  softDelete(id: bigint, now: string): boolean {
    return this.s.softDelete.run(now, id).changes === 1;
  }

  addReplyCount(parent: bigint, delta: 1 | -1): void {
    (delta > 0 ? this.s.incReplies : this.s.decReplies).run(parent);
  }

  mediaOwner(id: string): string | undefined {
    return (this.s.mediaOwner.get(id) as { owner_id: string } | undefined)?.owner_id;
  }

  insertMedia(id: string, ownerId: string, contentType: string, size: number, now: string): void {
    this.s.insertMedia.run(id, ownerId, contentType, size, now);
  }

  media(id: string): { id: string; owner_id: string; content_type: string; size: number; created_at: string } | undefined {
    return this.s.media.get(id) as { id: string; owner_id: string; content_type: string; size: number; created_at: string } | undefined;
  }

  /** True when the like is new. */
  like(postId: bigint, userId: string, now: string): boolean {
    if (this.s.insertLike.run(postId, userId, now).changes === 0) return false;
    this.s.incLikes.run(postId);
    return true;
  }

  /** True when a like was removed. */
  unlike(postId: bigint, userId: string): boolean {
    if (this.s.deleteLike.run(postId, userId).changes === 0) return false;
    this.s.decLikes.run(postId);
    return true;
  }

  /** True when the follow is new; counts change in the same transaction. */
  follow(followerId: string, followeeId: string, sinceId: bigint, now: string): boolean {
    if (this.s.insertFollow.run(followerId, followeeId, sinceId, now).changes === 0) return false;
    this.s.addFollowing.run(1, followerId);
    this.s.addFollowers.run(1, followeeId);
    return true;
  }

  unfollow(followerId: string, followeeId: string): boolean {
    if (this.s.deleteFollow.run(followerId, followeeId).changes === 0) return false;
    this.s.addFollowing.run(-1, followerId);
    this.s.addFollowers.run(-1, followeeId);
    return true;
  }

  event(type: EventType, actorId: string | null, recipientId: string | null, postId: string | null, payload: Record<string, unknown>, now: string): void {
    this.s.insertEvent.run(type, actorId, recipientId, postId, JSON.stringify(payload), now);
  }

  advanceConsumer(name: string, seq: number, now: string): void {
    this.s.advanceConsumer.run(name, seq, now);
  }

  /** An author's live posts with ids below `before`, newest first. */
  authorPage(authorId: string, before: bigint, limit: number): PostRow[] {
    return this.s.authorPage.all({ author: authorId, before, limit }) as PostRow[];
  }

  /** Ids of an author's live posts strictly between `after` and `before`, newest first. */
  authorIdsBetween(authorId: string, after: bigint, before: bigint, limit: number): bigint[] {
    const rows = this.s.authorIdsBetween.all({ author: authorId, after, before, limit }) as Array<{ id: string }>;
    return rows.map((r) => BigInt(r.id));
  }

  /**
   * Files every post created since the last filing under its author (`author_posts`) and moves
   * the filing position to the newest event, in the caller's transaction. Returns the number of
   * events the filing covered.
   */
  indexAuthorPosts(now: string): number {
    const from = this.filing.last();
    const to = this.filing.newest();
    if (to <= from) return 0;
    this.s.indexAuthorPosts.run(from, to);
    this.s.advanceConsumer.run(AUTHOR_INDEX_CONSUMER, to, now);
    return to - from;
  }

  /**
   * Deletes up to `limit` of the oldest outbox events that every one of `consumers` has processed
   * (a consumer with no position yet holds back everything) and that were made before `before`,
   * in the caller's transaction. Returns how many were deleted. Sequence numbers are never
   * reused (AUTOINCREMENT), so positions and the newest event stay meaningful.
   */
  pruneEvents(consumers: readonly string[], before: string, limit: number): number {
    let upTo = Infinity;
    for (const name of consumers) upTo = Math.min(upTo, this.consumer(name).last());
    if (!(upTo > 0)) return 0;
    return this.s.pruneEvents.run({ upTo, before, limit }).changes;
  }

  private consumer(name: string): OutboxCursor {
    let cursor = this.consumers.get(name);
    if (!cursor) this.consumers.set(name, (cursor = new OutboxCursor(this.db, name)));
    return cursor;
  }

  followees(userId: string): FolloweeRow[] {
    return this.s.followees.all(userId) as FolloweeRow[];
  }

  followersPage(userId: string, before: bigint, limit: number): UserListRow[] {
    return this.s.followersPage.all(userId, before, limit) as UserListRow[];
  }

  followingPage(userId: string, before: bigint, limit: number): UserListRow[] {
    return this.s.followingPage.all(userId, before, limit) as UserListRow[];
  }

  /**
   * The fan-out's position, and the posts created after both it and event `seq` (post_created
   * events: committed, answered 201, and maybe in no home timeline yet) in commit order, read in
   * one snapshot.
   */
  unfannedPostsAfter(seq: number): { position: number; posts: UnfannedPost[] } {
    const rows = this.s.unfannedPostsAfter.all(seq) as Array<[bigint, bigint | null, string | null, bigint | null]>;
    const posts: UnfannedPost[] = [];
    for (const [, eventSeq, authorId, id] of rows) if (eventSeq !== null) posts.push([Number(eventSeq), authorId!, id!]);
    return { position: Number(rows[0][0]), posts };
  }

  /**
   * A value that differs from the previous call's whenever the database may have changed in
   * between: data_version moves with every commit of another connection (any thread or process),
   * total_changes with every row this connection wrote. Equal values mean nothing was committed.
   */
  changeToken(): string {
    return (this.s.dataVersion.get() as number) + ':' + (this.s.totalChanges.get() as number);
  }

  /** [id, like_count, reply_count] of the live posts among these ids, in one query (any order). */
  liveCounts(ids: bigint[]): Array<[string, number, number]> {
    if (ids.length === 0) return [];
    return this.s.liveCounts.all('[' + ids.join(',') + ']') as Array<[string, number, number]>;
  }

  /** Live posts with these ids, with their author's handle, in one query (any order). */
  hydrate(ids: bigint[]): TimelineRow[] {
    if (ids.length === 0) return [];
    return this.s.hydrate.all('[' + ids.join(',') + ']') as TimelineRow[];
  }
}
