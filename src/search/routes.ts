// HTTP routes of search: GET /api/search (authenticated, rate limited per key and tier) and
// GET /api/suggest (public).
import type { CursorCodec } from '../core/cursor';
import { parseLimit, MAX_LIMIT } from '../core/page-limit';
import { checkSearchQuery, checkSuggestPrefix, ftsMatchExpression } from '../core/search-query';
import { TOP } from '../core/snowflake';
import { invalidRequest, type ErrorDetail } from '../http/errors';
import { queryParams, zodDetails, type Route } from '../http/router';
import type { RateLimits, SearchTier } from '../ratelimit/policies';
import { searchParams, suggestParams } from './schema';
import type { RelevancePosition, SearchService, SearchSort } from './service';

interface SearchRequest {
  query: string;
  match: string | null;
  sort: SearchSort;
  limit: number;
  /** recent: the id below which the page starts; relevance: where in its ranking, null for the first page. */
  before: bigint;
  position: RelevancePosition | null;
}

/** A cursor is valid only for the list it came from: the same sort of the same normalised query. */
function cursorKind(sort: SearchSort, query: string): string {
  return `search:${sort}:${query}`;
}

/** The tier whose limits a request is counted against; an invalid sort is shown the plain tier's. */
function tierOf(params: URLSearchParams): SearchTier {
  return params.get('sort') === 'relevance' ? 'relevance' : 'recent';
}

/** Every problem of a search request, named in one 400 (before any limit is taken). */
function parseSearch(params: URLSearchParams, cursors: CursorCodec): SearchRequest {
  const details: ErrorDetail[] = [];
  const shape = searchParams.safeParse({ q: params.get('q') ?? undefined, sort: params.get('sort') ?? undefined });
  if (!shape.success) details.push(...zodDetails(shape.error));
  const sort: SearchSort = shape.success ? shape.data.sort : 'recent';
  const q = checkSearchQuery(params.get('q'));
  if (!q.ok && params.get('q') !== null) details.push({ path: 'q', message: q.message });
  const limit = parseLimit(params.get('limit'));
  if (Number.isNaN(limit)) details.push({ path: 'limit', message: `must be an integer from 1 to ${MAX_LIMIT}` });
  let before = TOP;
  let position: RelevancePosition | null = null;
  const cursor = params.get('cursor');
  if (cursor !== null && q.ok && shape.success) {
    const kind = cursorKind(sort, q.query);
    if (sort === 'recent') {
      const p = cursors.decode(kind, cursor, 1);
      if (p) before = BigInt(p[0]);
      else details.push({ path: 'cursor', message: 'not a cursor issued for this list' });
    } else {
      const p = cursors.decode(kind, cursor, 4);
      if (p) position = { snapshot: [Number(p[0]), Number(p[1]), Number(p[2])], offset: Number(p[3]) };
      else details.push({ path: 'cursor', message: 'not a cursor issued for this list' });
    }
  }
  if (details.length > 0 || !q.ok) throw invalidRequest(details);
  return { query: q.query, match: ftsMatchExpression(q.terms), sort, limit, before, position };
}

export function searchRoutes(search: SearchService, limits: RateLimits, cursors: CursorCodec): Route[] {
  return [
    {
      method: 'GET',
      path: '/api/search',
      auth: true,
      // The tier's limits as they stand (nothing consumed) on every error that is not the 429.
      errorHeaders: (ctx) => limits.peekSearch(ctx.principal?.keyId ?? null, tierOf(queryParams(ctx))),
      handler(ctx) {
        const r = parseSearch(queryParams(ctx), cursors);
        const headers = limits.enforceSearch(ctx.principal!.keyId, r.sort);
        const kind = cursorKind(r.sort, r.query);
        let body: { items: unknown[]; next_cursor: string | null };
        if (r.sort === 'recent') {
          const page = search.recent(r.match, r.before, r.limit);
          body = { items: page.items, next_cursor: page.next === null ? null : cursors.encode(kind, [page.next.toString()]) };
        } else {
          const page = search.relevance(r.match, r.position, r.limit);
          const n = page.next;
          body = { items: page.items, next_cursor: n === null ? null : cursors.encode(kind, [...n.snapshot.map(String), String(n.offset)]) };
        }
        search.counted(r.query);
        return { status: 200, json: body, headers };
      },
    },
    {
      method: 'GET',
      path: '/api/suggest',
      handler(ctx) {
        const params = queryParams(ctx);
        const details: ErrorDetail[] = [];
        const shape = suggestParams.safeParse({ prefix: params.get('prefix') ?? undefined, limit: params.get('limit') ?? undefined });
        if (!shape.success) details.push(...zodDetails(shape.error));
        const prefix = checkSuggestPrefix(params.get('prefix'));
        if (!prefix.ok && params.get('prefix') !== null) details.push({ path: 'prefix', message: prefix.message });
        if (details.length > 0 || !prefix.ok || !shape.success) throw invalidRequest(details);
        return { status: 200, json: { suggestions: search.suggest(prefix.prefix, shape.data.limit) } };
      },
    },
  ];
}
