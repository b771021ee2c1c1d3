// Fan-out on write, as a piscina task: for a range of outbox events, push every new post's id
// into the home timelines of its author and (unless the author is a "celebrity", whose posts are
// pulled at read time) of every follower who followed before the post was made. Idempotent:
// adding an id that a timeline already holds changes nothing, so a replayed range is harmless.
//
// Follow events are handled too. A follow's `since_id` is minted when it is requested, and a post
// by the followee minted after it but committed before the follow may have been fanned out while
// the follow was not yet visible: it belongs in the follower's timeline (it is newer than the
// follow) and is not in its window. So each follow also pushes the followee's posts newer than
// `since_id` that exist when the task runs: usually none, those few otherwise.
import type { Statement } from 'better-sqlite3';
import type { TaskContext } from '../workers/tasks';
import type { Sqlite } from '../store/sqlite';
import { addToTimeline, encodeTimeline } from '../core/timeline-merge';
import { homeTimelines, pulledAtReadTime } from './home-timelines';
import { SocialStore } from './store';
import { TOP } from './service';

export interface FanoutRange {
  /** Last event already processed (exclusive). */
  after: number;
  /** Last event of this batch (inclusive). */
  upTo: number;
}

export interface FanoutResult {
  posts: number;
  /** Follows whose followee's posts newer than the follow were looked up. */
  follows: number;
  timelines: number;
}

interface FanoutStatements {
  /**
   * The live posts created by a range of events, with their author's follower count and whether
   * the author was ever left to the pull path.
   */
  posts: Statement;
  /** Followers of an author and the id their follow was minted at, below a bound. */
  followers: Statement;
  /** Just the followers whose follow was minted below a bound: all a single new post needs. */
  followersBelow: Statement;
  /** The follows made by a range of events that still exist, with their followee's standing. */
  follows: Statement;
  markPulled: Statement;
  /** The newest post committed, for a user's first timeline value. */
  newestPost: Statement;
  /** An author's posts (filed or still in the outbox), for the follows. */
  store: SocialStore;
}

const statements = new WeakMap<Sqlite, FanoutStatements>();
/** Authors this pool thread has already recorded in pull_authors. */
const markedPulled = new Set<string>();

function prepared(db: Sqlite): FanoutStatements {
  let s = statements.get(db);
  if (!s) {
    s = {
      posts: db
        .prepare(
          `SELECT p.id, p.author_id, u.followers_count, pa.author_id IS NOT NULL FROM events e
           JOIN posts p ON p.id = CAST(e.post_id AS INTEGER) JOIN users u ON u.id = p.author_id
           LEFT JOIN pull_authors pa ON pa.author_id = p.author_id
           WHERE e.seq > ? AND e.seq <= ? AND e.type = 'post_created' AND p.deleted_at IS NULL ORDER BY e.seq`,
        )
        .raw()
        .safeIntegers(true),
      followers: db.prepare('SELECT follower_id, since_id FROM follows WHERE followee_id = ? AND since_id < ?').raw().safeIntegers(true),
      followersBelow: db.prepare('SELECT follower_id FROM follows WHERE followee_id = ? AND since_id < ?').pluck(),
      follows: db
        .prepare(
          `SELECT f.follower_id, f.followee_id, f.since_id, u.followers_count, pa.author_id IS NOT NULL FROM events e
           JOIN follows f ON f.follower_id = e.actor_id AND f.followee_id = e.recipient_id JOIN users u ON u.id = f.followee_id
           LEFT JOIN pull_authors pa ON pa.author_id = f.followee_id
           WHERE e.seq > ? AND e.seq <= ? AND e.type = 'follow'`,
        )
        .raw()
        .safeIntegers(true),
      markPulled: db.prepare('INSERT OR IGNORE INTO pull_authors (author_id, marked_at) VALUES (?, ?)'),
      newestPost: db.prepare('SELECT COALESCE(MAX(id), 0) FROM posts').pluck().safeIntegers(true),
      store: new SocialStore(db),
    };
    statements.set(db, s);
  }
  return s;
}

export async function fanoutTask(ctx: TaskContext, range: FanoutRange): Promise<FanoutResult> {
  const s = prepared(ctx.sqlite);
  const db = homeTimelines(ctx.hot);
  const { celebrity_followers: celebrityAbove, timeline_cap: cap } = ctx.config.social;
  const targets = new Map<string, bigint[]>();
  const push = (userId: string, id: bigint) => {
    const list = targets.get(userId);
    if (list) list.push(id);
    else targets.set(userId, [id]);
  };
  // One query for the batch's posts, then one follower query per author (not per post).
  const byAuthor = new Map<string, bigint[]>();
  let posts = 0;
  for (const [id, authorId, followersCount, pulled] of s.posts.all(range.after, range.upTo) as Array<[bigint, string, bigint, bigint]>) {
    posts++;
    push(authorId, id);
    const everPulled = pulled === 1n || markedPulled.has(authorId);
    if (followersCount > celebrityAbove && !everPulled) {
      s.markPulled.run(authorId, new Date().toISOString());
      markedPulled.add(authorId);
    }
    // Readers merge such an author's posts in at read time (below the threshold too, once
    // pulled): pushing them as well would only be work for the reader to merge away.
    if (pulledAtReadTime(followersCount, everPulled, celebrityAbove)) continue;
    const list = byAuthor.get(authorId);
    if (list) list.push(id);
    else byAuthor.set(authorId, [id]);
  }
  for (const [authorId, ids] of byAuthor) {
    if (ids.length === 1) {
      // The usual case: the query's bound already keeps only follows made before the post.
      for (const follower of s.followersBelow.all(authorId, ids[0]) as string[]) push(follower, ids[0]);
      continue;
    }
    let newest = ids[0];
    for (const id of ids) if (id > newest) newest = id;
    for (const [follower, since] of s.followers.all(authorId, newest) as Array<[string, bigint]>) {
      // Only posts made after the follow (a follow does not backfill).
      for (const id of ids) if (id > since) push(follower, id);
    }
  }
  let follows = 0;
  for (const [followerId, followeeId, since, followersCount, pulled] of s.follows.all(range.after, range.upTo) as Array<[string, string, bigint, bigint, bigint]>) {
    // A celebrity's posts are merged in at read time, from the follow on.
    if (pulledAtReadTime(followersCount, pulled === 1n, celebrityAbove)) continue;
    follows++;
    for (const id of s.store.authorIdsBetween(followeeId, since, TOP, cap)) push(followerId, id);
  }
  if (targets.size === 0) return { posts, follows, timelines: 0 };
  let last: Promise<boolean> | undefined;
  let newest: bigint | undefined;
  for (const [userId, ids] of targets) {
    // getBinary (a copy), not getBinaryFast: shutdown was seen to hang in LMDB's writer with the
    // fast read here while this thread had an asynchronous write batch open.
    const current = db.getBinary(userId);
    // A user without a value was read from SQLite, which showed every post committed so far,
    // including ones whose fan-out has not run yet. A first value holding only this batch's
    // posts would hide those until their turn; so it starts empty, its floor at the newest post
    // committed now, and everything up to there stays on the SQLite side (timeline.ts).
    const value = current ? addToTimeline(current, ids, cap) : encodeTimeline((newest ??= s.newestPost.get() as bigint), []);
    last = db.put(userId, value);
  }
  await last;
  return { posts, follows, timelines: targets.size };
}
