// GET /api/timeline: the precomputed window from LMDB, merged with the recent posts of followed
// "celebrities" (pulled at read time, never pushed), filtered (deleted posts, authors no longer
// followed, posts older than the follow) and hydrated in one batch. Below the window's floor, and
// for users with no window at all, the page is assembled from SQLite, so a reader can scroll to the
// very first post. Results are newest first; the cursor is the last id returned.
import type { Config } from '../config';
import type { HotStore } from '../store/lmdb';
import { idsBelow, mergeNewestFirst } from '../core/timeline-merge';
import { homeTimelines, readWindow, type HomeTimelineDb } from './home-timelines';
import type { SocialStore, TimelineRow } from './store';
import type { Page } from './service';

export interface TimelineItem {
  id: string;
  text: string;
  author_id: string;
  media_ids: string[];
  reply_to: string | null;
  created_at: string;
  like_count: number;
  reply_count: number;
  author: { id: string; handle: string };
}

interface Followee {
  since: bigint;
  celebrity: boolean;
}

/** Extra ids read per step, so that a few filtered-out ids rarely need a second step. */
const OVERFETCH = 8;

export class HomeTimelineReader {
  private readonly db: HomeTimelineDb;

  constructor(
    private readonly store: SocialStore,
    hot: HotStore,
    private readonly config: Config,
  ) {
    this.db = homeTimelines(hot);
  }

  read(userId: string, before: bigint, limit: number): Page<TimelineItem> {
    const celebrityAbove = this.config.social.celebrity_followers;
    const followees = new Map<string, Followee>();
    const celebrities: string[] = [];
    for (const f of this.store.followees(userId)) {
      const celebrity = f.followers_count > celebrityAbove || f.pulled === 1;
      followees.set(f.id, { since: BigInt(f.since), celebrity });
      if (celebrity) celebrities.push(f.id);
    }
    followees.set(userId, { since: 0n, celebrity: false });

    const want = limit + 1;
    const out: TimelineItem[] = [];
    let upper = before;
    const window = readWindow(this.db, userId);

    if (window) {
      const floor = window.floor;
      // Within the window: its ids plus the celebrities' posts, step by step until the page is full.
      while (out.length < want && upper > floor + 1n) {
        const fetch = want - out.length + OVERFETCH;
        const lists: bigint[][] = [idsBelow(window, upper, fetch)];
        for (const c of celebrities) {
          const f = followees.get(c)!;
          lists.push(this.store.authorIdsBetween(c, f.since > floor ? f.since : floor, upper, fetch));
        }
        const step = mergeNewestFirst(lists, fetch);
        this.collect(step, followees, out, want);
        // Every list is complete down to the last id taken (or to the floor when all ran out).
        upper = step.length < fetch ? floor + 1n : step[step.length - 1];
      }
    }
    if (out.length < want && upper > 1n) {
      // From the durable store: each followed author's posts since the follow, and one's own.
      const need = want - out.length;
      const lists: bigint[][] = [];
      for (const [authorId, f] of followees) lists.push(this.store.authorIdsBetween(authorId, f.since, upper, need));
      this.collect(mergeNewestFirst(lists, need), followees, out, want);
    }
    const items = out.slice(0, limit);
    return { items, next: out.length > limit ? BigInt(items[items.length - 1].id) : null };
  }

  /** Hydrates ids (newest first) in one query and appends the visible ones to `out`. */
  private collect(ids: bigint[], followees: Map<string, Followee>, out: TimelineItem[], want: number): void {
    if (ids.length === 0) return;
    const byId = new Map<string, TimelineRow>();
    for (const row of this.store.hydrate(ids)) byId.set(row.id, row);
    for (const id of ids) {
      if (out.length >= want) return;
      const row = byId.get(id.toString());
      if (!row) continue; // deleted
      const f = followees.get(row.author_id);
      if (!f || id <= f.since) continue; // unfollowed, or posted before the follow
      out.push({
        id: row.id,
        text: row.text,
        author_id: row.author_id,
        media_ids: JSON.parse(row.media_ids) as string[],
        reply_to: row.reply_to,
        created_at: row.created_at,
        like_count: row.like_count,
        reply_count: row.reply_count,
        author: { id: row.author_id, handle: row.handle },
      });
    }
  }
}
