// GET /api/timeline: the precomputed window from LMDB, merged with the recent posts of followed
// "celebrities" (pulled at read time, never pushed), filtered (deleted posts, authors no longer
// followed, posts older than the follow) and hydrated in one batch. Below the window's floor, and
// for users with no window at all, the page is assembled from SQLite, so a reader can scroll to the
// very first post. Results are newest first; the cursor is the last id returned.
import type { Config } from '../config';
import type { HotStore } from '../store/lmdb';
import { topic, type PubSub } from '../pubsub/port';
import { GenerationalMap } from '../core/generational-map';
import { idsBelow, isWindow, mergeNewestFirst, windowFloor } from '../core/timeline-merge';
import { homeTimelines, pulledAtReadTime, type HomeTimelineDb } from './home-timelines';
import { postFields, type Post, type SocialStore } from './store';
import { UnfannedPosts } from './unfanned-posts';
import { postFieldsJson } from './post-json';
import type { PostMarks } from './post-marks';
import type { Page } from '../http/paging';
import type { PostWithCounts } from './service';

/**
 * The parts of a timeline item that never change once the post exists (posts are not edited and
 * handles are not renamed), serialised once per HTTP thread: `head` is the JSON of the item up to
 * `created_at`, `tail` its `author` object. Counts and liveness are kept apart (Visible).
 */
interface PostParts {
  item: Omit<TimelineItem, 'like_count' | 'reply_count'>;
  head: string;
  tail: string;
}

/**
 * A live post as SQLite said at `fetchedAt`: its fixed parts, its counts and, once a page has
 * been written with it, its JSON as bytes (so a page is a copy of cached bytes rather than a
 * string UTF-8 encoded per request). A new object whenever the counts change, so that the same
 * object means the same bytes.
 */
interface Visible {
  parts: PostParts;
  likes: number;
  replies: number;
  json: Buffer | null;
  fetchedAt: number;
}

/**
 * Entries per generation of the per-thread caches of posts and of followee lists (GenerationalMap:
 * at most twice this many are held). A page uses about 50 posts; what readers' first pages show
 * stays, and posts scrolled past by everyone make way. Under a post load, new posts pass through
 * at thousands a second: a larger bound would only hold more of those, which the heap then carries
 * through every full collection (bench/HISTORY.md, "2026-11-24, evening"). A reader whose page
 * is not held pays one query for it, as every reader did before there was a cache.
 */
const GENERATION = 2_000;
/**
 * Posts this thread is writing, kept until a read first shows them (or this many newer ones pass):
 * under a post load a read meets a new post within a turn or two of the event loop.
 */
const EXPECTED_GENERATION = 512;
/**
 * A thread keeps the posts it writes only while it serves timeline reads: one that served none
 * this long (a thread of a write-only load) keeps nothing.
 */
const READS_RECENT_MS = 1000;
/** Last page bodies kept per thread (~15 KB each). */
const BODIES_MAX = 1_000;
/**
 * Counts may lag by up to a second (docs/social.md). Deletions are not left to it: they reach every
 * thread at once.
 */
export const COUNTS_TTL_MS = 1000;
/**
 * A reader's page is served again for this long, as long as the reader posted nothing (PostMarks),
 * no post was deleted and the reader's follows did not change: what it can miss meanwhile is
 * others' new posts, which the contract lets reach followers within 5 s. Under a post load every
 * page changes between two reads, and making a page again costs several reads served from it:
 * its new posts read from the outbox tail, their JSON and counts made, the body written, and
 * what all of that leaves for the collector. A reader polling faster than this gets the same
 * page; one who reads every few seconds, as people do, gets a new page on every read anyway
 * (docs/social.md, bench/HISTORY.md "2026-12-02").
 */
export const PAGE_FRESH_MS = 250;
/**
 * Likes and replies of a cached post are read again once this old, so that a page served again
 * for up to PAGE_FRESH_MS still shows counts at most COUNTS_TTL_MS old.
 */
const COUNTS_REFRESH_MS = COUNTS_TTL_MS - PAGE_FRESH_MS;
/**
 * A user's followees are read again after this long even when no follow of theirs changed: the
 * celebrity standing of an author they follow can change with others' follows (AUTHOR_PULLED says
 * so at once when the fan-out starts leaving an author's posts to readers; this is the backstop).
 */
const FOLLOWEES_TTL_MS = 5000;
/**
 * The outbox tail is read again after this long even when the writer's signal did not move
 * (events written by another process raise no signal).
 */
const TAIL_TTL_MS = 1000;

/** A post was deleted: no thread may show it from the next read on. */
export const POST_DELETED = topic<{ id: string }>('social.post-deleted');
/** A user followed or unfollowed someone: their followees are read again. */
export const FOLLOWS_CHANGED = topic<{ userId: string }>('social.follows-changed');
/** The fan-out left an author's posts to readers from now on: every followee list is read again. */
export const AUTHOR_PULLED = topic<{ authorId: string }>('social.author-pulled');

interface Followees {
  byAuthor: Map<string, Followee>;
  celebrities: string[];
  fetchedAt: number;
}

export interface TimelineItem extends PostWithCounts {
  author: { id: string; handle: string };
}

interface Followee {
  since: bigint;
  celebrity: boolean;
}

/**
 * A reader's last page: its body, the entries it was made of (an entry is replaced when its counts
 * change, so the same entries by identity and the same cursor mean the same bytes), and what it
 * answered: the request, when it was made and the reader's post mark then (PAGE_FRESH_MS).
 */
interface LastPage {
  items: Visible[];
  cursor: string | null;
  body: Buffer;
  madeAt: number;
  mark: number;
  before: bigint;
  limit: number;
}

const ITEMS_OPEN = Buffer.from('{"items":[');
const COMMA = 0x2c;

/** Extra ids read per step, so that a few filtered-out ids rarely need a second step. */
const OVERFETCH = 8;

export class HomeTimelineReader {
  private readonly db: HomeTimelineDb;

  /**
   * `outboxSignal` is the counter the writer raises once new outbox events are durable, before it
   * answers their writes (writer/writer.ts): a post answered 201 has moved it. `marks` move when
   * a user's post is durable, before it is answered (service.ts, postWritten). `pubsub` carries
   * deletions and follow changes from the thread that made them (and AUTHOR_PULLED from the
   * fan-out); the caller calls dropPost and followsChanged itself for its own thread's changes.
   * `cacheGeneration`: entries per generation of the caches (GENERATION unless a test needs them
   * small).
   */
  constructor(
    private readonly store: SocialStore,
    hot: HotStore,
    private readonly config: Config,
    private readonly outboxSignal: Int32Array,
    private readonly marks: PostMarks,
    pubsub?: PubSub,
    cacheGeneration = GENERATION,
  ) {
    this.db = homeTimelines(hot);
    this.parts = new GenerationalMap(cacheGeneration);
    this.counts = new GenerationalMap(cacheGeneration);
    this.followees = new GenerationalMap(cacheGeneration);
    this.handles = new GenerationalMap(cacheGeneration);
    pubsub?.subscribe(POST_DELETED, (m) => this.dropPost(m.id));
    pubsub?.subscribe(FOLLOWS_CHANGED, (m) => this.followsChanged(m.userId));
    pubsub?.subscribe(AUTHOR_PULLED, () => this.followees.clear());
  }

  /** Keyed by the id as a bigint (Map compares bigints by value), so reads never format ids. */
  private readonly parts: GenerationalMap<bigint, PostParts>;
  /** The outbox signal's value when the tail was last read, and when that was. */
  private signalSeen = -1;
  private tailReadAt = -Infinity;
  /** When this thread last served a timeline read. */
  private lastReadAt = -Infinity;
  /**
   * A post's counts and parts, or null for a post that is not live (deleted: for good). Counts
   * are read again once older than COUNTS_TTL_MS; a deletion drops the entry at once.
   */
  private readonly counts: GenerationalMap<bigint, Visible | null>;
  /** Each reader's followees, until they follow or unfollow someone (or FOLLOWEES_TTL_MS). */
  private readonly followees: GenerationalMap<string, Followees>;
  /** The last body written per user (LastPage). */
  private readonly bodies = new Map<string, LastPage>();
  /**
   * Posts this thread sent to the writer, with when (expectPost): a read that meets one makes its
   * parts from it, with the counts of a new post, rather than asking SQLite for both.
   */
  private readonly expected = new GenerationalMap<bigint, { post: Post; at: number }>(EXPECTED_GENERATION);
  /** Authors' handles, as SQLite last said (handles are never renamed): for expected posts. */
  private readonly handles: GenerationalMap<string, string>;
  /** The posts the fan-out has not reached yet, by author (see visible). */
  private readonly unfanned = new UnfannedPosts();
  private readonly readUnfanned = (seq: number) => this.store.unfannedPostsAfter(seq);

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

  /**
   * The whole response body, `{"items":[...],"next_cursor":...}`, as bytes: each item's JSON is
   * encoded once per change of its counts and the page is one copy of those bytes.
   */
  readBody(userId: string, before: bigint, limit: number, cursorOf: (next: bigint | null) => string | null): Buffer {
    const now = performance.now();
    // Read before the page is made: a post of theirs answered from now on moves it again.
    const mark = this.marks.of(userId);
    const last = this.bodies.get(userId);
    if (last && now - last.madeAt < PAGE_FRESH_MS && last.mark === mark && last.before === before && last.limit === limit) {
      this.lastReadAt = now;
      return last.body;
    }
    const page = this.visible(userId, before, limit, now);
    const items = page.items;
    const cursor = cursorOf(page.next);
    if (last && last.cursor === cursor && sameItems(last.items, items)) {
      last.madeAt = now;
      last.mark = mark;
      last.before = before;
      last.limit = limit;
      return last.body;
    }
    const tail = Buffer.from('],"next_cursor":' + JSON.stringify(cursor) + '}');
    let size = ITEMS_OPEN.length + tail.length + (items.length > 0 ? items.length - 1 : 0);
    for (let i = 0; i < items.length; i++) {
      const v = items[i];
      if (v.json === null) {
        v.json = Buffer.from(v.parts.head + ',"like_count":' + v.likes + ',"reply_count":' + v.replies + v.parts.tail);
      }
      size += v.json.length;
    }
    const out = Buffer.allocUnsafe(size);
    let at = ITEMS_OPEN.copy(out, 0);
    for (let i = 0; i < items.length; i++) {
      if (i > 0) out[at++] = COMMA;
      at += items[i].json!.copy(out, at);
    }
    tail.copy(out, at);
    if (this.bodies.size >= BODIES_MAX) this.bodies.clear();
    this.bodies.set(userId, { items, cursor, body: out, madeAt: now, mark, before, limit });
    return out;
  }

  /**
   * A post this thread is about to send to the writer, as it will be stored. Until its commit no
   * read meets it (reads take ids only from what is committed); after it, its counts are those of
   * a new post, zero, true as of `at` (before the commit) and read again as any other counts are.
   */
  expectPost(post: Post, at = performance.now()): void {
    if (at - this.lastReadAt > READS_RECENT_MS) return;
    this.expected.set(BigInt(post.id), { post, at });
  }

  /** A deleted post: gone from this thread's next read. */
  dropPost(id: string): void {
    const key = BigInt(id);
    this.counts.set(key, null);
    this.expected.delete(key);
    this.bodies.clear();
  }

  /** A user followed or unfollowed someone: their next read asks SQLite for their followees. */
  followsChanged(userId: string): void {
    this.followees.delete(userId);
    this.bodies.delete(userId);
  }

  private visible(userId: string, before: bigint, limit: number, now = performance.now()): Page<Visible> {
    this.lastReadAt = now;
    // Read before the query: a post made during it moves the signal again for the next read.
    const signal = Atomics.load(this.outboxSignal, 0);
    if (signal !== this.signalSeen || now - this.tailReadAt > TAIL_TTL_MS) {
      // Posts committed but not yet fanned out are merged in from the outbox, so that nothing the
      // durable store already shows goes missing from the window meanwhile: a user's first window
      // holds what SQLite showed when it was made, and a post committed while it was being made
      // is in neither. The window is read in an LMDB snapshot taken after this query: a
      // post no longer in the outbox tail had its window writes committed before the fan-out's
      // position moved past it. Until the next read of the tail, the snapshot may only get newer
      // (lmdb-js renews it each event-loop turn), which adds to the window and removes nothing
      // from the tail. The tail is read incrementally: only the events committed since.
      this.unfanned.refresh(this.readUnfanned);
      this.db.resetReadTxn();
      // Last, so that a read that failed above is tried again by the next call.
      this.signalSeen = signal;
      this.tailReadAt = now;
    }
    const unfanned = this.unfanned;
    const { byAuthor: followees, celebrities } = this.followeesOf(userId, now);

    const want = limit + 1;
    const out: Visible[] = [];
    let upper = before;
    // The stored window as LMDB returns it (valid until the next LMDB read, and none happens
    // below): searched in place rather than decoded, since a page needs ~60 of its up to 800 ids.
    const stored = this.db.getBinaryFast(userId);
    const window = isWindow(stored) ? stored : null;

    if (window) {
      const floor = windowFloor(window);
      // Within the window: its ids, the followed authors' posts not fanned out yet (one's own
      // included: one follows oneself, see followeesOf) and the celebrities' posts, step by step
      // until the page is full. So a post shows in its author's and followers' timelines as soon
      // as it was answered 201, not only once the fan-out has reached it (duplicates merge away).
      while (out.length < want && upper > floor + 1n) {
        const fetch = want - out.length + OVERFETCH;
        const lists: bigint[][] = [idsBelow(window, upper, fetch)];
        const fresh = unfanned.newestFollowed(followees, floor, upper, fetch);
        if (fresh.length > 0) lists.push(fresh);
        if (celebrities.length > 0) {
          const ranges = celebrities.map((c) => {
            const since = followees.get(c)!.since;
            return [c, since > floor ? since : floor, upper] as const;
          });
          lists.push(...this.store.idsOfAuthorsBetween(ranges, fetch));
        }
        const step = mergeNewestFirst(lists, fetch);
        this.collect(step, followees, out, want, now);
        // Every list is complete down to the last id taken (or to the floor when all ran out).
        upper = step.length < fetch ? floor + 1n : step[step.length - 1];
      }
    }
    if (out.length < want && upper > 1n) {
      // From the durable store: each followed author's posts since the follow, and one's own.
      const need = want - out.length;
      const lists = this.store.idsOfAuthorsBetween(
        Array.from(followees, ([authorId, f]) => [authorId, f.since, upper] as const),
        need,
      );
      this.collect(mergeNewestFirst(lists, need), followees, out, want, now);
    }
    const items = out.slice(0, limit);
    return { items, next: out.length > limit ? BigInt(items[items.length - 1].parts.item.id) : null };
  }

  private followeesOf(userId: string, now: number): Followees {
    const cached = this.followees.get(userId);
    if (cached && now - cached.fetchedAt < FOLLOWEES_TTL_MS) return cached;
    const celebrityAbove = this.config.social.celebrity_followers;
    const byAuthor = new Map<string, Followee>();
    const celebrities: string[] = [];
    for (const f of this.store.followees(userId)) {
      const celebrity = pulledAtReadTime(f.followers_count, f.pulled === 1, celebrityAbove);
      byAuthor.set(f.id, { since: BigInt(f.since), celebrity });
      if (celebrity) celebrities.push(f.id);
    }
    byAuthor.set(userId, { since: 0n, celebrity: false });
    const result = { byAuthor, celebrities, fetchedAt: now };
    this.followees.set(userId, result);
    return result;
  }

  /**
   * Hydrates ids (newest first) and appends the visible ones to `out`: one query for the counts
   * of those not cached or cached too long ago (a deleted post has no row), and one for the fixed
   * parts of those this thread has not serialised yet.
   */
  private collect(ids: bigint[], followees: Map<string, Followee>, out: Visible[], want: number, now: number): void {
    if (ids.length === 0) return;
    const counts = this.counts;
    // Each id's entry is looked up once: refreshing writes to the cache, which can retire the
    // generation holding another id's entry (GenerationalMap).
    const found: Array<Visible | null | undefined> = new Array(ids.length);
    let stale: bigint[] | null = null;
    for (let i = 0; i < ids.length; i++) {
      const v = counts.get(ids[i]);
      found[i] = v;
      if (v === undefined || (v !== null && now - v.fetchedAt >= COUNTS_REFRESH_MS)) (stale ??= []).push(ids[i]);
    }
    if (stale !== null) {
      const fresh = this.refreshCounts(stale, now);
      for (let i = 0; i < ids.length; i++) {
        const v = fresh.get(ids[i]);
        if (v !== undefined) found[i] = v;
      }
    }
    for (let i = 0; i < ids.length; i++) {
      if (out.length >= want) return;
      const v = found[i];
      if (!v) continue; // deleted
      const f = followees.get(v.parts.item.author_id);
      if (!f || ids[i] <= f.since) continue; // unfollowed, or posted before the follow
      out.push(v);
    }
  }

  /**
   * Reads the counts (and liveness) of `ids` again: one query for those whose fixed parts this
   * thread has, one that brings parts and counts together for the others, except the new posts
   * this thread wrote itself (expectPost), which need neither. Each id's parts are held from the
   * start, never looked up again after the cache was written to: a write can retire a generation,
   * and a live post whose parts went with it must not be taken for a deleted one.
   */
  private refreshCounts(ids: bigint[], now: number): Map<bigint, Visible | null> {
    const known = new Map<bigint, PostParts>();
    const unknown: bigint[] = [];
    const result = new Map<bigint, Visible | null>();
    const counts = this.counts;
    const update = (id: bigint, parts: PostParts, likes: number, replies: number, fetchedAt = now) => {
      let v = counts.get(id);
      if (v && v.likes === likes && v.replies === replies) {
        // Unchanged: the same object, so pages made of it keep their bytes.
        v.fetchedAt = fetchedAt;
      } else {
        v = { parts, likes, replies, json: null, fetchedAt };
        counts.set(id, v);
      }
      result.set(id, v);
    };
    for (const id of ids) {
      const parts = this.parts.get(id);
      if (parts) {
        known.set(id, parts);
        continue;
      }
      const e = this.expected.get(id);
      const handle = e && now - e.at < COUNTS_REFRESH_MS ? this.handles.get(e.post.author_id) : undefined;
      if (handle === undefined) {
        unknown.push(id);
        continue;
      }
      this.expected.delete(id);
      const made = partsOf(e!.post, handle);
      this.parts.set(id, made);
      update(id, made, 0, 0, e!.at);
    }
    if (known.size > 0) {
      for (const [key, likes, replies] of this.store.liveCounts([...known.keys()])) {
        const id = BigInt(key);
        update(id, known.get(id)!, likes, replies);
      }
    }
    if (unknown.length > 0) {
      for (const row of this.store.hydrate(unknown)) {
        const id = BigInt(row.id);
        const parts = partsOf(postFields(row), row.handle);
        this.handles.set(row.author_id, row.handle);
        this.parts.set(id, parts);
        update(id, parts, row.like_count, row.reply_count);
      }
    }
    // An id asked about that has no row is not live: deleted, for good.
    for (const id of ids) {
      if (result.has(id)) continue;
      counts.set(id, null);
      result.set(id, null);
    }
    return result;
  }
}

function partsOf(post: Post, handle: string): PostParts {
  const author = { id: post.author_id, handle };
  const item = { id: post.id, text: post.text, author_id: post.author_id, media_ids: post.media_ids, reply_to: post.reply_to, created_at: post.created_at, author };
  return { item, head: postFieldsJson(post), tail: ',"author":{"id":"' + post.author_id + '","handle":' + JSON.stringify(handle) + '}}' };
}

function sameItems(a: Visible[], b: Visible[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
