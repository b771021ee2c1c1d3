// The contract's paging of every list: `?limit` (1–100, default 20) and `?cursor` (opaque, issued
// by the server for that list only), answered as {"items": [...], "next_cursor"}. A list's
// position is an id: a page holds the items strictly below it, newest first.
import type { CursorCodec } from '../core/cursor';
import { MAX_LIMIT, parseLimit } from '../core/page-limit';
import { TOP } from '../core/snowflake';
import { invalidRequest, type ErrorDetail } from './errors';

export interface PageRequest {
  limit: number;
  /** Exclusive upper bound of a newest-first list: items strictly older than this. */
  before: bigint;
  /** Exclusive lower bound of an oldest-first list: items strictly newer than this. */
  after: bigint;
}

/** One page of a list: its items, and the position of the next page (null on the last). */
export interface Page<T> {
  items: T[];
  next: bigint | null;
}

export interface PageBody<T> {
  items: T[];
  next_cursor: string | null;
}

/**
 * Reads `?limit` and `?cursor` for the list `kind`, which names the list and its subject
 * (`timeline:<user>`), so that a cursor of one list is not accepted by another. Every problem is
 * named in one 400. A `cursor` parameter that is present but empty is not a cursor either.
 */
export function pageRequest(query: URLSearchParams, kind: string, cursors: CursorCodec): PageRequest {
  const details: ErrorDetail[] = [];
  const limit = parseLimit(query.get('limit'));
  if (Number.isNaN(limit)) details.push({ path: 'limit', message: `must be an integer from 1 to ${MAX_LIMIT}` });
  let position: bigint | null = null;
  const cursor = query.get('cursor');
  if (cursor !== null) {
    const decoded = cursors.decode(kind, cursor, 1);
    if (decoded) position = BigInt(decoded[0]);
    else details.push({ path: 'cursor', message: 'not a cursor issued for this list' });
  }
  if (details.length > 0) throw invalidRequest(details);
  return { limit, before: position ?? TOP, after: position ?? 0n };
}

/** The page of `rows` read with `limit + 1`: the extra row only says that a next page exists. */
export function pageOf<R, T>(rows: R[], limit: number, item: (row: R) => T, position: (row: R) => bigint): Page<T> {
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  return { items: kept.map(item), next: more ? position(kept[kept.length - 1]) : null };
}

export function pageBody<T>(kind: string, page: Page<T>, cursors: CursorCodec): PageBody<T> {
  return { items: page.items, next_cursor: page.next === null ? null : cursors.encode(kind, [page.next.toString()]) };
}
