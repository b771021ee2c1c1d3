// Search and suggestions, independent of HTTP: they take checked input and return pages and
// lists; routes.ts parses requests and builds replies. Matching posts come from the engine's index
// (its own database file, read on this thread's connection); every candidate is then hydrated from
// the main database like a timeline item, which also drops posts deleted since they were indexed,
// so a deleted post never shows even before the indexer has removed it.
import { GenerationalMap } from '../core/generational-map';
import { postFields, type SocialStore } from '../social/store';
import type { TimelineItem } from '../social/timeline';
import type { Suggestion } from '../core/suggestions';
import type { QueryStream } from './query-stream';
import { RELEVANCE_WINDOW, type RelevanceSnapshots, type SnapshotKey } from './relevance-snapshots';
import type { SearchIndexStore } from './store';
import type { SuggestionIndex } from './suggestions';

export type SearchSort = 'recent' | 'relevance';
export type SearchItem = TimelineItem;

/** Where a relevance page starts: an offset into a kept ranking (relevance-snapshots.ts). */
export interface RelevancePosition {
  snapshot: SnapshotKey;
  offset: number;
}

export interface SearchPage<P> {
  items: SearchItem[];
  /** Where the next page starts; null on the last page. */
  next: P | null;
}

/** Extra candidates read per step, so that a few deleted posts rarely need a second step. */
const OVERFETCH = 4;
/**
 * Entries per generation of the fixed parts of posts kept per thread (GenerationalMap: at most
 * twice this many): a post is never edited and a handle never renamed, so only liveness and
 * counts are read per request.
 */
const PARTS_GENERATION = 10_000;

type PostParts = Omit<SearchItem, 'like_count' | 'reply_count'>;

export class SearchService {
  private readonly parts: GenerationalMap<string, PostParts>;

  /** `partsGeneration`: entries per generation of the parts cache (small only in tests). */
  constructor(
    private readonly index: SearchIndexStore,
    private readonly posts: SocialStore,
    private readonly suggestions: SuggestionIndex,
    private readonly snapshots: RelevanceSnapshots,
    private readonly stream: QueryStream,
    private readonly halfLifeMs: number,
    partsGeneration = PARTS_GENERATION,
  ) {
    this.parts = new GenerationalMap(partsGeneration);
  }

  /** Posts matching every term (`match`: null for none), newest first, below `before`. */
  recent(match: string | null, before: bigint, limit: number): SearchPage<bigint> {
    const want = limit + 1;
    const out: SearchItem[] = [];
    let upper = before;
    while (match !== null && out.length < want) {
      const fetch = want - out.length + OVERFETCH;
      const ids = this.index.recent(match, upper, fetch);
      this.collect(ids, out, want);
      if (ids.length < fetch) break;
      upper = ids[ids.length - 1];
    }
    const items = out.slice(0, limit);
    return { items, next: out.length > limit ? BigInt(items[items.length - 1].id) : null };
  }

  /**
   * Posts matching every term, best match first (BM25; equal scores newest first), among the best
   * RELEVANCE_WINDOW. The first page ranks them and, when there is more, keeps the ranking; later
   * pages are the next slices of that same ranking, so no post shows twice or goes missing while
   * the index changes between pages.
   */
  relevance(match: string | null, position: RelevancePosition | null, limit: number, nowMs = Date.now()): SearchPage<RelevancePosition> {
    if (match === null) return { items: [], next: null };
    let ids = position ? this.snapshots.load(position.snapshot, nowMs) : null;
    let snapshot = ids ? position!.snapshot : null;
    ids ??= this.index.relevant(match, RELEVANCE_WINDOW);
    const want = limit + 1;
    const out: SearchItem[] = [];
    let lastKept = -1;
    let from = position ? position.offset : 0;
    while (from < ids.length && out.length < want) {
      const start = from;
      const n = want - out.length + OVERFETCH;
      // The last item of the page is where the next page continues.
      this.collect(ids.slice(start, start + n), out, want, (i) => {
        if (out.length < limit) lastKept = start + i;
      });
      from = start + n;
    }
    const items = out.slice(0, limit);
    if (out.length <= limit) return { items, next: null };
    snapshot ??= this.snapshots.save(ids, nowMs);
    return { items, next: { snapshot, offset: lastKept + 1 } };
  }

  /**
   * Appends the live posts among `ids` (in their order) to `out`, up to `want`, telling `kept`
   * the index in `ids` of each one appended. One query reads which are live and their counts; the
   * fixed parts of a post are read once per thread and kept. Each post's parts are held for the
   * request as they are found or fetched: writing to the cache can retire the generation holding
   * another's, and a live post must not be skipped for it.
   */
  private collect(ids: bigint[], out: SearchItem[], want: number, kept?: (i: number) => void): void {
    if (ids.length === 0) return;
    const live = new Map<string, [number, number]>();
    const parts = new Map<string, PostParts>();
    let missing: bigint[] | null = null;
    for (const [id, likes, replies] of this.posts.liveCounts(ids)) {
      live.set(id, [likes, replies]);
      const known = this.parts.get(id);
      if (known) parts.set(id, known);
      else (missing ??= []).push(BigInt(id));
    }
    if (missing !== null) {
      for (const row of this.posts.hydrate(missing)) {
        const fetched = { ...postFields(row), author: { id: row.author_id, handle: row.handle } };
        this.parts.set(row.id, fetched);
        parts.set(row.id, fetched);
      }
    }
    for (let i = 0; i < ids.length; i++) {
      if (out.length >= want) return;
      const key = ids[i].toString();
      const counts = live.get(key);
      const p = counts && parts.get(key);
      if (!counts || !p) continue; // deleted (or deleted between the two reads)
      kept?.(i);
      out.push({
        id: p.id,
        text: p.text,
        author_id: p.author_id,
        media_ids: [...p.media_ids],
        reply_to: p.reply_to,
        created_at: p.created_at,
        like_count: counts[0],
        reply_count: counts[1],
        author: { ...p.author },
      });
    }
  }

  /** Counts an answered query toward suggestions, off the request path. */
  counted(query: string, nowMs = Date.now()): void {
    this.stream.push(query, nowMs);
  }

  suggest(prefix: string, limit: number, nowMs = Date.now()): Suggestion[] {
    return this.suggestions.lookup(prefix, limit, nowMs, this.halfLifeMs);
  }
}
