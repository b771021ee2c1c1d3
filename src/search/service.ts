// Search and suggestions, independent of HTTP: they take checked input and return pages and
// lists; routes.ts parses requests and builds replies. Matching posts come from the engine's index
// (its own database file, read on this thread's connection); every candidate is then hydrated from
// the main database like a timeline item, which also drops posts deleted since they were indexed,
// so a deleted post never shows even before the indexer has removed it.
import { postFields, type SocialStore } from '../social/store';
import type { TimelineItem } from '../social/timeline';
import type { Suggestion } from '../core/suggestions';
import type { QueryStream } from './query-stream';
import type { SearchIndexStore } from './store';
import type { SuggestionIndex } from './suggestions';

export type SearchSort = 'recent' | 'relevance';
export type SearchItem = TimelineItem;

/** Where a relevance page starts: the newest post the first page could see, and the last item shown. */
export interface RelevancePosition {
  ceiling: bigint;
  after: { score: number; id: bigint } | null;
}

export interface SearchPage<P> {
  items: SearchItem[];
  /** Where the next page starts; null on the last page. */
  next: P | null;
}

/** Extra candidates read per step, so that a few deleted posts rarely need a second step. */
const OVERFETCH = 8;

export class SearchService {
  constructor(
    private readonly index: SearchIndexStore,
    private readonly posts: SocialStore,
    private readonly suggestions: SuggestionIndex,
    private readonly stream: QueryStream,
    private readonly halfLifeMs: number,
  ) {}

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
   * Posts matching every term, best match first (BM25; equal scores newest first). The first page
   * fixes the ceiling, the newest post in the index then, so posts indexed later do not appear
   * on later pages; each page continues after the (score, id) of the previous page's last item.
   */
  relevance(match: string | null, position: RelevancePosition | null, limit: number): SearchPage<RelevancePosition> {
    const want = limit + 1;
    const out: SearchItem[] = [];
    const scores: number[] = [];
    const ceiling = position ? position.ceiling : this.index.newestId();
    let after = position ? position.after : null;
    while (match !== null && out.length < want) {
      const fetch = want - out.length + OVERFETCH;
      const rows = this.index.relevant(match, ceiling, after, fetch);
      this.collect(
        rows.map((r) => r[0]),
        out,
        want,
        (i) => scores.push(rows[i][1]),
      );
      if (rows.length < fetch) break;
      const last = rows[rows.length - 1];
      after = { score: last[1], id: last[0] };
    }
    const items = out.slice(0, limit);
    const next = out.length > limit ? { ceiling, after: { score: scores[limit - 1], id: BigInt(items[limit - 1].id) } } : null;
    return { items, next };
  }

  /**
   * Appends the live posts among `ids` (in their order) to `out`, up to `want`, telling `kept`
   * the index in `ids` of each one appended.
   */
  private collect(ids: bigint[], out: SearchItem[], want: number, kept?: (i: number) => void): void {
    if (ids.length === 0) return;
    const rows = new Map(this.posts.hydrate(ids).map((r) => [r.id, r]));
    for (let i = 0; i < ids.length; i++) {
      if (out.length >= want) return;
      const row = rows.get(ids[i].toString());
      if (!row) continue; // deleted
      kept?.(i);
      out.push({ ...postFields(row), like_count: row.like_count, reply_count: row.reply_count, author: { id: row.author_id, handle: row.handle } });
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
