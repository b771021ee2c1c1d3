// Home timelines in LMDB: one binary value per user (see core/timeline-merge for the layout),
// written only by the fan-out task and read by every HTTP thread. Everything here can be rebuilt
// from SQLite; a missing value means "no precomputed window", and reads go to SQLite instead.
import type { Database } from 'lmdb';
import type { HotStore } from '../store/lmdb';
import { idsBelow, isWindow, windowFloor, windowLength } from '../core/timeline-merge';

export const HOME_TIMELINES_DB = 'home_timelines';

export type HomeTimelineDb = Database<Buffer, string>;

const opened = new WeakMap<object, HomeTimelineDb>();

export function homeTimelines(hot: HotStore): HomeTimelineDb {
  let db = opened.get(hot.root);
  if (!db) {
    db = hot.root.openDB<Buffer, string>({ name: HOME_TIMELINES_DB, encoding: 'binary', compression: false });
    opened.set(hot.root, db);
  }
  return db;
}

/**
 * True when the user's timeline shows this post id as far as the precomputed part is concerned:
 * the window holds it, or leaves it to SQLite by having its floor at or above it (trimmed by the
 * cap), or there is no window and every read of the user's goes to SQLite (see fanout.ts).
 */
export function windowCovers(db: HomeTimelineDb, userId: string, id: bigint): boolean {
  const buf = db.getBinaryFast(userId);
  if (!isWindow(buf)) return true;
  // The window's newest id at or below `id` is `id` itself when the window holds it.
  return windowFloor(buf) >= id || idsBelow(buf, id + 1n, 1)[0] === id;
}

/**
 * Whether an author's posts are left out of fan-out and merged into followers' timelines at read
 * time: above `celebrityAbove` followers now, or ever left to that path before (`pull_authors`),
 * so that none of their posts goes missing when the count drops. The fan-out and the timeline
 * reader must agree on it.
 */
export function pulledAtReadTime(followersCount: number | bigint, everPulled: boolean, celebrityAbove: number): boolean {
  return followersCount > celebrityAbove || everPulled;
}

/** The most ids a page of a timeline shows (the contract's largest `limit`), and one more. */
const FULL_PAGE_IDS = 101;
const WINDOWS_META_DB = 'home_timelines_meta';
/** The windows were checked for the short ones earlier versions made (dropShortWindows). */
const FIRST_WINDOWS_FROM_SQLITE = 'first_windows_from_sqlite';

/**
 * Once per data directory: drops the windows an earlier version made empty, with a floor at the
 * newest post of the time and not a page above it since, whose reads each went on to SQLite. A user
 * whose window is dropped is served from SQLite until a fan-out reaches them and makes their window
 * again from SQLite (fanout.ts, firstWindow). A window trimmed by the cap, or with a page above
 * its floor, stays. Returns the number dropped, or null when it was done before.
 */
export function dropShortWindows(hot: HotStore): number | null {
  const meta = hot.db<string, string>(WINDOWS_META_DB);
  if (meta.get(FIRST_WINDOWS_FROM_SQLITE) !== undefined) return null;
  const db = homeTimelines(hot);
  const short: string[] = [];
  for (const { key, value } of db.getRange({})) {
    if (!isWindow(value)) continue;
    if (windowFloor(value) > 0n && windowLength(value) < FULL_PAGE_IDS) short.push(key);
  }
  hot.root.transactionSync(() => {
    for (const key of short) db.removeSync(key);
    meta.putSync(FIRST_WINDOWS_FROM_SQLITE, new Date().toISOString());
  });
  return short.length;
}
