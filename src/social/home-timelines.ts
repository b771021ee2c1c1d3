// Home timelines in LMDB: one binary value per user (see core/timeline-merge for the layout),
// written only by the fan-out task and read by every HTTP thread. Everything here can be rebuilt
// from SQLite; a missing value means "no precomputed window", and reads go to SQLite instead.
import type { Database } from 'lmdb';
import type { HotStore } from '../store/lmdb';

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
  if (!buf) return true;
  if (buf.readBigUInt64BE(0) >= id) return true;
  for (let off = buf.length - 8; off >= 8; off -= 8) {
    const v = buf.readBigUInt64BE(off);
    if (v === id) return true;
    if (v < id) return false;
  }
  return false;
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
