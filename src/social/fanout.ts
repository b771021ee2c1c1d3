// Fan-out on write, as a piscina task: for a range of outbox events, push every new post's id
// into the home timelines of its author and (unless the author is a "celebrity", whose posts are
// pulled at read time) of every follower who followed before the post was made. Idempotent:
// adding an id that a timeline already holds changes nothing, so a replayed range is harmless.
import type { Statement } from 'better-sqlite3';
import type { TaskContext } from '../workers/tasks';
import type { Sqlite } from '../store/sqlite';
import { addToTimeline, appendNewest } from '../core/timeline-merge';
import { homeTimelines } from './home-timelines';

export interface FanoutRange {
  /** Last event already processed (exclusive). */
  after: number;
  /** Last event of this batch (inclusive). */
  upTo: number;
}

export interface FanoutResult {
  posts: number;
  timelines: number;
}

interface FanoutStatements {
  postEvents: Statement;
  post: Statement;
  followers: Statement;
  markPulled: Statement;
}

const statements = new WeakMap<Sqlite, FanoutStatements>();
/** Authors this pool thread has already recorded in pull_authors. */
const markedPulled = new Set<string>();

function prepared(db: Sqlite): FanoutStatements {
  let s = statements.get(db);
  if (!s) {
    s = {
      postEvents: db.prepare("SELECT post_id FROM events WHERE seq > ? AND seq <= ? AND type = 'post_created' ORDER BY seq"),
      post: db.prepare(
        'SELECT p.author_id, p.deleted_at, u.followers_count FROM posts p JOIN users u ON u.id = p.author_id WHERE p.id = ?',
      ),
      followers: db.prepare('SELECT follower_id FROM follows WHERE followee_id = ? AND since_id < ?').pluck(),
      markPulled: db.prepare('INSERT OR IGNORE INTO pull_authors (author_id, marked_at) VALUES (?, ?)'),
    };
    statements.set(db, s);
  }
  return s;
}

export async function fanoutTask(ctx: TaskContext, range: FanoutRange): Promise<FanoutResult> {
  const s = prepared(ctx.sqlite);
  const { celebrity_followers: celebrityAbove, timeline_cap: cap } = ctx.config.social;
  const targets = new Map<string, bigint[]>();
  const push = (userId: string, id: bigint) => {
    const list = targets.get(userId);
    if (list) list.push(id);
    else targets.set(userId, [id]);
  };
  const postIds = s.postEvents.pluck().all(range.after, range.upTo) as string[];
  let posts = 0;
  for (const postId of postIds) {
    const id = BigInt(postId);
    const post = s.post.get(id) as { author_id: string; deleted_at: string | null; followers_count: number } | undefined;
    if (!post || post.deleted_at !== null) continue;
    posts++;
    push(post.author_id, id);
    if (post.followers_count > celebrityAbove) {
      if (!markedPulled.has(post.author_id)) {
        s.markPulled.run(post.author_id, new Date().toISOString());
        markedPulled.add(post.author_id);
      }
      continue;
    }
    for (const follower of s.followers.iterate(post.author_id, id) as IterableIterator<string>) push(follower, id);
  }
  if (targets.size === 0) return { posts, timelines: 0 };
  const db = homeTimelines(ctx.hot);
  let last: Promise<boolean> | undefined;
  for (const [userId, ids] of targets) {
    const current = db.getBinary(userId);
    const next = ids.length === 1 ? appendNewest(current, ids[0], cap) : addToTimeline(current, ids, cap);
    last = db.put(userId, next);
  }
  await last;
  return { posts, timelines: targets.size };
}
