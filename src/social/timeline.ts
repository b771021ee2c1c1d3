// GET /api/timeline: the precomputed window from LMDB, merged with the recent posts of followed
// "celebrities" (pulled at read time, never pushed), filtered (deleted posts, authors no longer
// followed, posts older than the follow) and hydrated in one batch. Below the window's floor, and
// for users with no window at all, the page is assembled from SQLite, so a reader can scroll to the
// very first post. Results are newest first; the cursor is the last id returned.
import type { Config } from '../config';
import type { HotStore } from '../store/lmdb';
import { idsBelow, mergeNewestFirst } from '../core/timeline-merge';
import { homeTimelines, readWindow, type HomeTimelineDb } from './home-timelines';
import { postFields, type SocialStore, type TimelineRow } from './store';
import type { Page, PostWithCounts } from './service';

/**
 * The parts of a timeline item that never change once the post exists (posts are not edited and
 * handles are not renamed), serialised once per HTTP thread: `head` is the JSON of the item up to
 * `created_at`, `tail` its `author` object. Counts and liveness are read fresh on every request.
 */
interface PostParts {
  item: Omit<TimelineItem, 'like_count' | 'reply_count'>;
  head: string;
  tail: string;
}

/** A visible item of a page: its fixed parts and its current counts. */
interface Visible {
  parts: PostParts;
  likes: number;
  replies: number;
}

/** Per-thread caches are emptied when they grow beyond this many entries. */
const CACHE_MAX = 50_000;

interface Followees {
  byAuthor: Map<string, Followee>;
  celebrities: string[];
}

export interface TimelineItem extends PostWithCounts {
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

  private readonly parts = new Map<string, PostParts>();
  /**
   * What SQLite said, kept only while SQLite is unchanged: each read first compares the store's
   * change token with the one these were read under and drops them all when it moved, so they
   * are never staler than a fresh query (a like, a delete, a follow anywhere empties them).
   */
  private epoch = '';
  private readonly counts = new Map<string, [number, number] | null>();
  private readonly followees = new Map<string, Followees>();

  read(userId: string, before: bigint, limit: number): Page<TimelineItem> {
    const page = this.visible(userId, before, limit);
    const items = page.items.map(({ parts: { item }, likes, replies }) => ({
      id: item.id,
      text: item.text,
      author_id: item.author_id,
      media_ids: [...item.media_ids],
      reply_to: item.reply_to,
      created_at: item.created_at,
      like_count: likes,
      reply_count: replies,
      author: { ...item.author },
    }));
    return { items, next: page.next };
  }

  /** The page as the JSON text of its `items` array, built from per-thread cached fragments. */
  readJson(userId: string, before: bigint, limit: number): { itemsJson: string; next: bigint | null } {
    const page = this.visible(userId, before, limit);
    let itemsJson = '[';
    for (let i = 0; i < page.items.length; i++) {
      const v = page.items[i];
      if (i > 0) itemsJson += ',';
      itemsJson += v.parts.head + ',"like_count":' + v.likes + ',"reply_count":' + v.replies + v.parts.tail;
    }
    return { itemsJson: itemsJson + ']', next: page.next };
  }

  private visible(userId: string, before: bigint, limit: number): Page<Visible> {
    const token = this.store.changeToken();
    if (token !== this.epoch) {
      this.epoch = token;
      this.counts.clear();
      this.followees.clear();
    }
    const { byAuthor: followees, celebrities } = this.followeesOf(userId);

    const want = limit + 1;
    const out: Visible[] = [];
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
    return { items, next: out.length > limit ? BigInt(items[items.length - 1].parts.item.id) : null };
  }

  private followeesOf(userId: string): Followees {
    const cached = this.followees.get(userId);
    if (cached) return cached;
    const celebrityAbove = this.config.social.celebrity_followers;
    const byAuthor = new Map<string, Followee>();
    const celebrities: string[] = [];
    for (const f of this.store.followees(userId)) {
      const celebrity = f.followers_count > celebrityAbove || f.pulled === 1;
      byAuthor.set(f.id, { since: BigInt(f.since), celebrity });
      if (celebrity) celebrities.push(f.id);
    }
    byAuthor.set(userId, { since: 0n, celebrity: false });
    if (this.followees.size >= CACHE_MAX) this.followees.clear();
    const result = { byAuthor, celebrities };
    this.followees.set(userId, result);
    return result;
  }

  /**
   * Hydrates ids (newest first) and appends the visible ones to `out`: one query for the current
   * counts of the live posts among them (a deleted post has no row), and one for the fixed parts
   * of those this thread has not serialised yet.
   */
  private collect(ids: bigint[], followees: Map<string, Followee>, out: Visible[], want: number): void {
    if (ids.length === 0) return;
    const unknown: bigint[] = [];
    for (const id of ids) if (!this.counts.has(id.toString())) unknown.push(id);
    if (unknown.length > 0) {
      if (this.counts.size + unknown.length > CACHE_MAX) this.counts.clear();
      for (const id of unknown) this.counts.set(id.toString(), null);
      const missing: bigint[] = [];
      for (const [id, likes, replies] of this.store.liveCounts(unknown)) {
        this.counts.set(id, [likes, replies]);
        if (!this.parts.has(id)) missing.push(BigInt(id));
      }
      if (missing.length > 0) {
        if (this.parts.size + missing.length > CACHE_MAX) this.parts.clear();
        for (const row of this.store.hydrate(missing)) this.parts.set(row.id, partsOf(row));
      }
    }
    for (const id of ids) {
      if (out.length >= want) return;
      const key = id.toString();
      const counts = this.counts.get(key);
      if (!counts) continue; // deleted
      const parts = this.parts.get(key);
      if (!parts) continue; // deleted between the two queries
      const f = followees.get(parts.item.author_id);
      if (!f || id <= f.since) continue; // unfollowed, or posted before the follow
      out.push({ parts, likes: counts[0], replies: counts[1] });
    }
  }
}

function partsOf(row: TimelineRow): PostParts {
  const item = { ...postFields(row), author: { id: row.author_id, handle: row.handle } };
  const head =
    '{"id":' + JSON.stringify(item.id) + ',"text":' + JSON.stringify(item.text) + ',"author_id":' + JSON.stringify(item.author_id) +
    ',"media_ids":' + JSON.stringify(item.media_ids) + ',"reply_to":' + JSON.stringify(item.reply_to) + ',"created_at":' + JSON.stringify(item.created_at);
  return { item, head, tail: ',"author":' + JSON.stringify(item.author) + '}' };
}
