// Persistence of the microblog in SQLite: posts, follows and likes, and the microblog's reads of
// the outbox (its post_created events, before they are filed under their authors or fanned out).
// Post ids are INTEGER columns bound as bigint (or, for a group of new posts, as their decimal
// text, which the column's affinity stores as the integer) and read back as text (CAST), because
// a 64-bit id does not fit a JavaScript number.
import type { Statement } from 'better-sqlite3';
import type { Sqlite } from '../store/sqlite';
import { outboxOf, positionSql, type OutboxStore } from '../outbox/store';

/** The home-timeline fan-out's position in the outbox (fanout.ts). */
export const FANOUT_CONSUMER = 'fanout';
/** The writer's filing of posts under their authors in `author_posts` (migration 4). */
export const AUTHOR_INDEX_POSITION = 'author_index';

/** A stored post as the API shows it. */
export interface Post {
  id: string;
  text: string;
  author_id: string;
  media_ids: string[];
  reply_to: string | null;
  created_at: string;
}

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

/** The columns a new post is inserted with, and one row's placeholders. */
const POST_INSERT = 'posts (id, author_id, text, media_ids, reply_to, created_at)';
const ROW = '(?, ?, ?, ?, ?, ?)';
/** The same for a post without media or parent: the columns' defaults hold those. */
const PLAIN_POST_INSERT = 'posts (id, author_id, text, created_at)';
const PLAIN_ROW = '(?, ?, ?, ?)';
/** Rows per statement of insertPlainPosts: 4 values each, well under SQLite's 32,766 variables. */
const MULTI_ROW_INSERT = 32;
/** A prepared INSERT of some number of plain posts, with the arrays its values are bound from. */
interface PlainInsert {
  statement: Statement;
  postValues: unknown[];
  eventValues: unknown[];
}
/** The payload `event` writes for a post that replies to nothing. */
const PLAIN_POST_PAYLOAD = JSON.stringify({ reply_to: null });

/** The microblog's events in the outbox. */
export type SocialEventType = 'post_created' | 'post_deleted' | 'like' | 'unlike' | 'reply' | 'follow' | 'unfollow';

const POST_COLUMNS =
  'CAST(p.id AS TEXT) AS id, p.author_id, p.text, p.media_ids, CAST(p.reply_to AS TEXT) AS reply_to, p.created_at, p.like_count, p.reply_count';

/** SQL for the filing position: every post_created event up to it is in `author_posts`. */
const FILING_POSITION = positionSql(AUTHOR_INDEX_POSITION);

/**
 * SQL for the ids of an author's (`@author`) posts below `before`: the newest `@limit` live ones
 * filed in `author_posts`, plus every post of the author's that was created after the filing
 * position, read from the outbox. One statement, so both parts come from the same snapshot, in
 * which the filing and its position were committed together.
 */
function authorPostIds(before: string): string {
  return `SELECT id FROM (
      SELECT a.id FROM author_posts a JOIN posts f ON f.id = a.id
      WHERE a.author_id = @author AND a.id < ${before} AND f.deleted_at IS NULL ORDER BY a.id DESC LIMIT @limit)
    UNION ALL
    SELECT CAST(e.post_id AS INTEGER) FROM events e
    WHERE e.seq > ${FILING_POSITION} AND e.type = 'post_created' AND e.actor_id = @author`;
}

/** Ids newest first, as a sort comparator. */
function newestFirst(a: bigint, b: bigint): number {
  return a > b ? -1 : a < b ? 1 : 0;
}

export class SocialStore {
  private readonly s: Record<string, Statement>;
  /** Runs a function in one read transaction (deferred): its reads share one snapshot. */
  private readonly inSnapshot: (fn: () => unknown) => unknown;
  /** insertPlainPosts's statement and value arrays, by row count. */
  private readonly plainInserts = new Map<number, PlainInsert>();
  private readonly outbox: OutboxStore;

  constructor(readonly db: Sqlite) {
    this.outbox = outboxOf(db);
    this.inSnapshot = db.transaction((fn: () => unknown) => fn());
    const q = (sql: string) => db.prepare(sql);
    this.s = {
      insertPost: q(`INSERT INTO ${POST_INSERT} VALUES ${ROW}`),
      insertPostMedia: q('INSERT OR IGNORE INTO post_media (media_id, post_id) VALUES (?, ?)'),
      livePost: q(`SELECT ${POST_COLUMNS} FROM posts p WHERE p.id = ? AND p.deleted_at IS NULL`),
      postAuthor: q('SELECT author_id, CAST(reply_to AS TEXT) AS reply_to, deleted_at FROM posts WHERE id = ?'),
      softDelete: q('UPDATE posts SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL'),
      incReplies: q('UPDATE posts SET reply_count = reply_count + 1 WHERE id = ?'),
      decReplies: q('UPDATE posts SET reply_count = reply_count - 1 WHERE id = ? AND reply_count > 0'),
      insertLike: q('INSERT OR IGNORE INTO likes (post_id, user_id, created_at) VALUES (?, ?, ?)'),
      deleteLike: q('DELETE FROM likes WHERE post_id = ? AND user_id = ?'),
      incLikes: q('UPDATE posts SET like_count = like_count + 1 WHERE id = ?'),
      decLikes: q('UPDATE posts SET like_count = like_count - 1 WHERE id = ? AND like_count > 0'),
      insertFollow: q('INSERT OR IGNORE INTO follows (follower_id, followee_id, since_id, created_at) VALUES (?, ?, ?, ?)'),
      deleteFollow: q('DELETE FROM follows WHERE follower_id = ? AND followee_id = ?'),
      addFollowing: q('UPDATE users SET following_count = following_count + ? WHERE id = ?'),
      addFollowers: q('UPDATE users SET followers_count = followers_count + ? WHERE id = ?'),
      authorPage: q(
        `SELECT ${POST_COLUMNS} FROM posts p WHERE p.id IN (${authorPostIds('@before')})
         AND p.id < @before AND p.deleted_at IS NULL ORDER BY p.id DESC LIMIT @limit`,
      ),
      filedIdsBetween: q(
        `SELECT a.id FROM author_posts a JOIN posts f ON f.id = a.id
         WHERE a.author_id = @author AND a.id > @after AND a.id < @before AND f.deleted_at IS NULL ORDER BY a.id DESC LIMIT @limit`,
      )
        .pluck()
        .safeIntegers(true),
      // The authors come as one JSON array, so the list of the filter is built once per call.
      unfiledOf: q(
        `SELECT e.actor_id, p.id FROM events e JOIN posts p ON p.id = CAST(e.post_id AS INTEGER)
         WHERE e.seq > ${FILING_POSITION} AND e.type = 'post_created' AND e.actor_id IN (SELECT value FROM json_each(?))
           AND p.deleted_at IS NULL`,
      )
        .raw()
        .safeIntegers(true),
      countPosts: q('SELECT COUNT(*) FROM posts WHERE deleted_at IS NULL').pluck(),
      countFollows: q('SELECT COUNT(*) FROM follows').pluck(),
      countLikes: q('SELECT COUNT(*) FROM likes').pluck(),
      hasUnfiled: q(`SELECT EXISTS (SELECT 1 FROM events WHERE type = 'post_created' AND seq > ${FILING_POSITION})`).pluck(),
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
          `WITH position (last_seq) AS (SELECT ${positionSql(FANOUT_CONSUMER)})
           SELECT position.last_seq, e.seq, e.actor_id, CAST(e.post_id AS INTEGER) FROM position
           LEFT JOIN events e ON e.seq > MAX(?, position.last_seq) AND e.type = 'post_created' ORDER BY e.seq`,
        )
        .raw()
        .safeIntegers(true),
      liveCounts: db
        .prepare('SELECT CAST(id AS TEXT), like_count, reply_count FROM posts WHERE id IN (SELECT value FROM json_each(?)) AND deleted_at IS NULL')
        .raw(),
      hydrate: q(
        `SELECT ${POST_COLUMNS}, u.handle FROM posts p JOIN users u ON u.id = p.author_id
         WHERE p.id IN (SELECT value FROM json_each(?)) AND p.deleted_at IS NULL`,
      ),
      // posts_reply_to lists a parent's replies in rowid (id) order.
      repliesPage: q(
        `SELECT ${POST_COLUMNS}, u.handle FROM posts p JOIN users u ON u.id = p.author_id
         WHERE p.reply_to = ? AND p.id > ? AND p.deleted_at IS NULL ORDER BY p.id LIMIT ?`,
      ),
    };
  }

  /**
   * Inserts posts without media or parent, each with its `post_created` event, in as few
   * statements as possible: the same rows as insertPost and event would write one at a time,
   * without a statement call and its bindings per row, which cost more than the row itself.
   * Events follow the order of `posts`.
   */
  insertPlainPosts(posts: ReadonlyArray<{ id: string; authorId: string; text: string; createdAt: string }>): void {
    for (let from = 0; from < posts.length; from += MULTI_ROW_INSERT) {
      const rows = Math.min(MULTI_ROW_INSERT, posts.length - from);
      const { statement, postValues, eventValues } = this.plainInsert(rows);
      for (let i = 0; i < rows; i++) {
        const p = posts[from + i];
        // The id as its decimal text: the INTEGER column stores it as the integer it is, the
        // event's TEXT column as it is.
        postValues[i * 4] = p.id;
        postValues[i * 4 + 1] = p.authorId;
        postValues[i * 4 + 2] = p.text;
        postValues[i * 4 + 3] = p.createdAt;
        eventValues[i * 3] = p.authorId;
        eventValues[i * 3 + 1] = p.id;
        eventValues[i * 3 + 2] = p.createdAt;
      }
      statement.run(postValues);
      this.outbox.appendUniform('post_created', PLAIN_POST_PAYLOAD, rows, eventValues);
      // The arrays outlive the call: they must not keep the posts' texts alive until the next.
      postValues.fill(undefined);
      eventValues.fill(undefined);
    }
  }

  /**
   * The INSERT of `rows` plain posts, and the arrays bound for them and their events: made once
   * per row count, and filled again for each statement (they are bound before the call returns).
   */
  private plainInsert(rows: number): PlainInsert {
    let insert = this.plainInserts.get(rows);
    if (!insert) {
      insert = {
        statement: this.db.prepare(`INSERT INTO ${PLAIN_POST_INSERT} VALUES ${Array(rows).fill(PLAIN_ROW).join(', ')}`),
        postValues: new Array(rows * 4),
        eventValues: new Array(rows * 3),
      };
      this.plainInserts.set(rows, insert);
    }
    return insert;
  }

  insertPost(id: bigint, authorId: string, text: string, mediaIds: string[], replyTo: bigint | null, createdAt: string): void {
    this.s.insertPost.run(id, authorId, text, JSON.stringify(mediaIds), replyTo, createdAt);
    for (const mediaId of mediaIds) this.s.insertPostMedia.run(mediaId, id);
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

  /** Appends a microblog event to the outbox, in the caller's transaction. */
  event(type: SocialEventType, actorId: string | null, recipientId: string | null, postId: string | null, payload: Record<string, unknown>, now: string): void {
    this.outbox.append({ type, actorId, recipientId, postId, payload: JSON.stringify(payload), createdAt: now });
  }

  /** An author's live posts with ids below `before`, newest first. */
  authorPage(authorId: string, before: bigint, limit: number): PostRow[] {
    return this.s.authorPage.all({ author: authorId, before, limit }) as PostRow[];
  }

  /** Ids of an author's live posts strictly between `after` and `before`, newest first. */
  authorIdsBetween(authorId: string, after: bigint, before: bigint, limit: number): bigint[] {
    return this.idsOfAuthorsBetween([[authorId, after, before]], limit)[0];
  }

  /**
   * authorIdsBetween for several ranges of authors' posts at once: one list per range, in the
   * order given. The posts not filed under their authors yet are read from the outbox in one
   * pass for all of them, not once per author (under a post load that tail is up to a filing's
   * worth of events). Filed and unfiled parts are read in one transaction, so both come from the
   * snapshot in which a filing and its position were committed together.
   */
  idsOfAuthorsBetween(ranges: ReadonlyArray<readonly [authorId: string, after: bigint, before: bigint]>, limit: number): bigint[][] {
    if (ranges.length === 0) return [];
    return this.inSnapshot(() => {
      const unfiled = new Map<string, bigint[]>();
      const rows = this.s.unfiledOf.all(JSON.stringify(ranges.map((r) => r[0]))) as Array<[string, bigint]>;
      for (const [authorId, id] of rows) {
        const list = unfiled.get(authorId);
        if (list) list.push(id);
        else unfiled.set(authorId, [id]);
      }
      return ranges.map(([authorId, after, before]) => {
        const filed = this.s.filedIdsBetween.all({ author: authorId, after, before, limit }) as bigint[];
        const fresh = unfiled.get(authorId)?.filter((id) => id > after && id < before);
        if (!fresh || fresh.length === 0) return filed;
        // The two parts never overlap in one snapshot, but an unfiled id need not be newer than
        // every filed one: ids are minted before their posts commit, not in commit order.
        return fresh.concat(filed).sort(newestFirst).slice(0, limit);
      });
    }) as bigint[][];
  }

  /**
   * Files every post created since the last filing under its author (`author_posts`) and moves
   * the filing position to the newest event, in the caller's transaction. Returns the number of
   * events the filing covered.
   */
  indexAuthorPosts(now: string): number {
    const from = this.outbox.position(AUTHOR_INDEX_POSITION);
    const to = this.outbox.newest();
    if (to <= from) return 0;
    this.s.indexAuthorPosts.run(from, to);
    this.outbox.setPosition(AUTHOR_INDEX_POSITION, to, now);
    return to - from;
  }

  /** True when some post was created after the last filing under authors (a crash can leave such). */
  hasUnfiledPosts(): boolean {
    return this.s.hasUnfiled.get() === 1;
  }

  /** Live posts, follows and likes, for `perch status`. */
  counts(): { posts: number; follows: number; likes: number } {
    return {
      posts: this.s.countPosts.get() as number,
      follows: this.s.countFollows.get() as number,
      likes: this.s.countLikes.get() as number,
    };
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

  /** [id, like_count, reply_count] of the live posts among these ids, in one query (any order). */
  liveCounts(ids: bigint[]): Array<[string, number, number]> {
    if (ids.length === 0) return [];
    return this.s.liveCounts.all('[' + ids.join(',') + ']') as Array<[string, number, number]>;
  }

  /** The live direct replies to a post with ids above `after`, oldest first, with their authors' handles. */
  repliesPage(parentId: bigint, after: bigint, limit: number): TimelineRow[] {
    return this.s.repliesPage.all(parentId, after, limit) as TimelineRow[];
  }

  /** Live posts with these ids, with their author's handle, in one query (any order). */
  hydrate(ids: bigint[]): TimelineRow[] {
    if (ids.length === 0) return [];
    return this.s.hydrate.all('[' + ids.join(',') + ']') as TimelineRow[];
  }
}

/** What the fan-out reads (fanout.ts): rows as arrays, ids as bigint. */
export class FanoutStore {
  /** The live posts created by a range of events, and their authors. */
  private readonly postsStmt: Statement;
  /**
   * An author's follower count and whether their posts were ever left to the pull path: asked
   * once per author of a batch, not joined into every post's row.
   */
  private readonly standingStmt: Statement;
  /** Followers of an author and the id their follow was minted at, below a bound. */
  private readonly followersStmt: Statement;
  /** Just the followers whose follow was minted below a bound: all a single new post needs. */
  private readonly followersBelowStmt: Statement;
  /** The follows made by a range of events that still exist, with their followee's standing. */
  private readonly followsStmt: Statement;
  private readonly markPulledStmt: Statement;

  constructor(db: Sqlite) {
    this.postsStmt = db
      .prepare(
        `SELECT p.id, p.author_id FROM events e JOIN posts p ON p.id = CAST(e.post_id AS INTEGER)
         WHERE e.seq > ? AND e.seq <= ? AND e.type = 'post_created' AND p.deleted_at IS NULL`,
      )
      .raw()
      .safeIntegers(true);
    this.standingStmt = db
      .prepare('SELECT u.followers_count, pa.author_id IS NOT NULL FROM users u LEFT JOIN pull_authors pa ON pa.author_id = u.id WHERE u.id = ?')
      .raw()
      .safeIntegers(true);
    this.followersStmt = db.prepare('SELECT follower_id, since_id FROM follows WHERE followee_id = ? AND since_id < ?').raw().safeIntegers(true);
    this.followersBelowStmt = db.prepare('SELECT follower_id FROM follows WHERE followee_id = ? AND since_id < ?').pluck();
    this.followsStmt = db
      .prepare(
        `SELECT f.follower_id, f.followee_id, f.since_id, u.followers_count, pa.author_id IS NOT NULL FROM events e
         JOIN follows f ON f.follower_id = e.actor_id AND f.followee_id = e.recipient_id JOIN users u ON u.id = f.followee_id
         LEFT JOIN pull_authors pa ON pa.author_id = f.followee_id
         WHERE e.seq > ? AND e.seq <= ? AND e.type = 'follow'`,
      )
      .raw()
      .safeIntegers(true);
    this.markPulledStmt = db.prepare('INSERT OR IGNORE INTO pull_authors (author_id, marked_at) VALUES (?, ?)');
  }

  /** [post id, author id] of the live posts created by the events in (after, upTo]. */
  postsCreated(after: number, upTo: number): Array<[bigint, string]> {
    return this.postsStmt.all(after, upTo) as Array<[bigint, string]>;
  }

  /** [followers_count, 1 when ever pulled at read time] of an author. */
  standing(authorId: string): [followersCount: bigint, pulled: bigint] {
    return this.standingStmt.get(authorId) as [bigint, bigint];
  }

  /** [follower id, since id] of an author's follows minted below `below`. */
  followers(authorId: string, below: bigint): Array<[string, bigint]> {
    return this.followersStmt.all(authorId, below) as Array<[string, bigint]>;
  }

  /** The followers whose follow was minted below `below`. */
  followersBelow(authorId: string, below: bigint): string[] {
    return this.followersBelowStmt.all(authorId, below) as string[];
  }

  /** [follower, followee, since id, followee's followers_count, pulled] of the live follows made in (after, upTo]. */
  followsMade(after: number, upTo: number): Array<[string, string, bigint, bigint, bigint]> {
    return this.followsStmt.all(after, upTo) as Array<[string, string, bigint, bigint, bigint]>;
  }

  /** Records that an author's posts are left to the pull path from now on. */
  markPulled(authorId: string, now: string): void {
    this.markPulledStmt.run(authorId, now);
  }
}
