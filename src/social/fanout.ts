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
import type { TaskContext } from '../workers/context';
import type { Sqlite } from '../store/sqlite';
import type { OutboxRange } from '../outbox/consumer';
import { IdTable, addToTimeline, encodeTimeline, mergeNewestFirst } from '../core/timeline-merge';
import { homeTimelines, pulledAtReadTime } from './home-timelines';
import { ThreadPubSub } from '../pubsub/port';
import { AUTHOR_PULLED } from './timeline';
import { FanoutStore, SocialStore } from './store';
import { TOP } from '../core/snowflake';

export interface FanoutResult {
  posts: number;
  /** Follows whose followee's posts newer than the follow were looked up. */
  follows: number;
  timelines: number;
}

const stores = new WeakMap<Sqlite, { fanout: FanoutStore; social: SocialStore }>();
/** Authors this pool thread has already recorded in pull_authors. */
const markedPulled = new Set<string>();
/** How this pool thread tells the HTTP threads' timeline readers that an author is pulled now. */
let readers: ThreadPubSub | undefined;

function storesOf(db: Sqlite): { fanout: FanoutStore; social: SocialStore } {
  let s = stores.get(db);
  if (!s) stores.set(db, (s = { fanout: new FanoutStore(db), social: new SocialStore(db) }));
  return s;
}

export async function fanoutTask(ctx: TaskContext, range: OutboxRange): Promise<FanoutResult> {
  const s = storesOf(ctx.sqlite);
  const db = homeTimelines(ctx.hot);
  const { celebrity_followers: celebrityAbove, timeline_cap: cap } = ctx.config.social;
  const rows = s.fanout.postsCreated(range.after, range.upTo);
  // The batch's posts by id, so that an author's posts, and every list of table indexes built
  // from them in that order, come out ascending.
  rows.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const table = new IdTable(rows.map((r) => r[0]));
  // What each timeline gets: indexes into the table, and the ids of posts from before the batch
  // that a follow brings in (rare, and not in the table).
  const targets = new Map<string, number[]>();
  const older = new Map<string, bigint[]>();
  const push = (userId: string, index: number) => {
    const list = targets.get(userId);
    if (list) list.push(index);
    else targets.set(userId, [index]);
  };
  // One follower query per author (not per post), then one pass over the posts in id order, so
  // that every timeline's list of indexes comes out ascending.
  const byAuthor = new Map<string, number[]>();
  const standings = new Map<string, [followersCount: bigint, pulled: bigint]>();
  for (let index = 0; index < rows.length; index++) {
    const authorId = rows[index][1];
    let standing = standings.get(authorId);
    if (!standing) standings.set(authorId, (standing = s.fanout.standing(authorId)));
    const [followersCount, pulled] = standing;
    const everPulled = pulled === 1n || markedPulled.has(authorId);
    if (followersCount > celebrityAbove && !everPulled) {
      s.fanout.markPulled(authorId, new Date().toISOString());
      markedPulled.add(authorId);
      // Readers keep followee lists between reads: from now on they must pull this author.
      (readers ??= new ThreadPubSub(0)).publish(AUTHOR_PULLED, { authorId });
    }
    // Readers merge such an author's posts in at read time (below the threshold too, once
    // pulled): pushing them as well would only be work for the reader to merge away.
    if (pulledAtReadTime(followersCount, everPulled, celebrityAbove)) continue;
    const list = byAuthor.get(authorId);
    if (list) list.push(index);
    else byAuthor.set(authorId, [index]);
  }
  /** Each pushed author's followers, and the id each follow was minted at (null: all older). */
  const followersOf = new Map<string, { users: string[]; since: bigint[] | null }>();
  for (const [authorId, indexes] of byAuthor) {
    if (indexes.length === 1) {
      // The usual case: the query's bound already keeps only follows made before the post.
      followersOf.set(authorId, { users: s.fanout.followersBelow(authorId, table.ids[indexes[0]]), since: null });
      continue;
    }
    const rowsOfFollows = s.fanout.followers(authorId, table.ids[indexes[indexes.length - 1]]);
    followersOf.set(authorId, { users: rowsOfFollows.map((r) => r[0]), since: rowsOfFollows.map((r) => r[1]) });
  }
  for (let index = 0; index < rows.length; index++) {
    const authorId = rows[index][1];
    push(authorId, index);
    const followers = followersOf.get(authorId);
    if (!followers) continue;
    const { users, since } = followers;
    const id = table.ids[index];
    for (let k = 0; k < users.length; k++) {
      // Only posts made after the follow (a follow does not backfill).
      if (since === null || id > since[k]) push(users[k], index);
    }
  }
  let follows = 0;
  for (const [followerId, followeeId, since, followersCount, pulled] of s.fanout.followsMade(range.after, range.upTo)) {
    // A celebrity's posts are merged in at read time, from the follow on.
    if (pulledAtReadTime(followersCount, pulled === 1n, celebrityAbove)) continue;
    follows++;
    const ids = s.social.authorIdsBetween(followeeId, since, TOP, cap);
    if (ids.length === 0) continue;
    const list = older.get(followerId);
    if (list) list.push(...ids);
    else older.set(followerId, ids);
    if (!targets.has(followerId)) targets.set(followerId, []);
  }
  if (targets.size === 0) return { posts: rows.length, follows, timelines: 0 };
  let last: Promise<boolean> | undefined;
  let timelines = 0;
  const firstWindowsUntil = performance.now() + FIRST_WINDOWS_MS;
  for (const [userId, indexes] of targets) {
    // getBinary (a copy), not getBinaryFast: shutdown was seen to hang in LMDB's writer with the
    // fast read here while this thread had an asynchronous write batch open.
    const current = db.getBinary(userId);
    let value: Buffer;
    if (!current) {
      // Past the budget the user stays without a value, served from SQLite, which holds this
      // batch's posts too; a later task that reaches them makes their window.
      if (performance.now() > firstWindowsUntil) continue;
      value = firstWindow(s.social, userId, cap, celebrityAbove);
    } else {
      const extra = older.get(userId);
      value = extra ? addToTimeline(current, [...indexes.map((i) => table.ids[i]), ...extra], cap) : table.addTo(current, indexes, cap);
    }
    last = db.put(userId, value);
    timelines++;
  }
  await last;
  return { posts: rows.length, follows, timelines };
}

/**
 * Time a task spends making first windows, at most. A first window costs a few queries per author
 * the user follows, and a post that is the first to reach many users would otherwise hold up the
 * fan-out of every post after it (after a lost hot store, the first posts reach everyone).
 */
const FIRST_WINDOWS_MS = 20;
/** Ids a first window reads from SQLite at most, over all the authors a user follows. */
const FIRST_WINDOW_IDS = 20_000;
/** Ids read per author for a first window, however many authors the user follows. */
const FIRST_WINDOW_IDS_PER_AUTHOR = 20;
/**
 * A first window reads each author's newest ids in two steps: first this many times their even
 * share of the window, which is enough when the authors' posts are about as recent as each
 * other's, then the rest only for those whose lists were cut and the window is still short.
 */
const FIRST_READ_SHARE = 1.5;

/**
 * A user's first window, read from SQLite: their own posts and those of each author they follow
 * from the follow on (authors pulled at read time apart), the newest `cap` of them. SQLite shows
 * every post committed so far, those whose fan-out has not run yet included, so the window hides
 * nothing; and a user whose authors post rarely finds their first pages in it rather than asking
 * SQLite again on every read. The floor is what the reads could not vouch for: the newest id left
 * out by the cap, or of an author whose posts were read only in part, at or below which reads go
 * to SQLite as before; 0 when the window holds the whole timeline.
 *
 * Each author's list is read up to `each` ids, but in two steps (FIRST_READ_SHARE): with active
 * authors a full window would otherwise read `cap` ids of every one of them, most of them below
 * the window, and under a post load that made each first window cost milliseconds. The window is
 * the same either way: when the first step's lists hold `cap` + 1 ids above the newest id at which
 * one of them was cut, nothing a longer read could add is above them.
 */
export function firstWindow(social: SocialStore, userId: string, cap: number, celebrityAbove: number): Buffer {
  const authors: Array<[authorId: string, since: bigint]> = [[userId, 0n]];
  for (const f of social.followees(userId)) {
    if (f.id !== userId && !pulledAtReadTime(f.followers_count, f.pulled === 1, celebrityAbove)) authors.push([f.id, BigInt(f.since)]);
  }
  const each = Math.min(cap + 1, Math.max(FIRST_WINDOW_IDS_PER_AUTHOR, Math.floor(FIRST_WINDOW_IDS / authors.length)));
  const first = Math.min(each, Math.max(FIRST_WINDOW_IDS_PER_AUTHOR, Math.ceil((FIRST_READ_SHARE * (cap + 1)) / authors.length)));
  const lists = social.idsOfAuthorsBetween(
    authors.map(([authorId, since]) => [authorId, since, TOP] as const),
    first,
  );
  let window = mergeAbove(lists, first, cap);
  if (window.ids.length <= cap && first < each && lists.some((ids) => ids.length === first)) {
    // Short of a full window above what the first step vouches for: read on below the cut lists.
    const cut = lists.flatMap((ids, i) => (ids.length === first ? [i] : []));
    const more = social.idsOfAuthorsBetween(
      cut.map((i) => [authors[i][0], authors[i][1], lists[i][first - 1]] as const),
      each - first,
    );
    cut.forEach((i, k) => (lists[i] = lists[i].concat(more[k])));
    window = mergeAbove(lists, each, cap);
  }
  const { ids } = window;
  let { floor } = window;
  if (ids.length > cap) floor = ids[cap];
  return encodeTimeline(floor, ids.slice(0, cap).reverse());
}

/**
 * The newest `cap` + 1 ids of lists read newest first, `limit` ids at most each, above the floor:
 * the newest id at which a list was cut by its limit (it may go on below), or 0.
 */
function mergeAbove(lists: bigint[][], limit: number, cap: number): { ids: bigint[]; floor: bigint } {
  let floor = 0n;
  for (const ids of lists) if (ids.length === limit && ids[limit - 1] > floor) floor = ids[limit - 1];
  return { ids: mergeNewestFirst(lists, cap + 1).filter((id) => id > floor), floor };
}
