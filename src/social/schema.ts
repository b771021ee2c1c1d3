// Request shapes of the microblog endpoints, and the contract's list paging (?limit, ?cursor).
import { z } from 'zod';
import { invalidField } from '../http/errors';
import { queryParams, type Ctx } from '../http/router';
import type { CursorCodec } from '../core/cursor';
import { MAX_LIMIT, parseLimit } from '../core/page-limit';
import { TOP } from './service';

export const createPostSchema = z.strictObject({
  text: z.string(),
  // A refinement, not .max(): zod also applies .max() to a value that is not an array (a string's
  // length), which added a second, wrong detail to the 400.
  media_ids: z
    .array(z.string())
    .refine((ids) => ids.length <= 4, 'at most 4 media ids')
    .optional(),
  reply_to: z.string().nullable().optional(),
});

export interface PageRequest {
  limit: number;
  /** Exclusive upper bound: items strictly older than this. */
  before: bigint;
}

/**
 * Reads `?limit` and `?cursor` for the list `kind` (which names the list and its subject, so a
 * cursor of one list is not accepted by another).
 */
export function pageRequest(ctx: Ctx, kind: string, cursors: CursorCodec): PageRequest {
  const q = queryParams(ctx);
  const limit = parseLimit(q.get('limit'));
  if (Number.isNaN(limit)) throw invalidField('limit', `limit must be an integer from 1 to ${MAX_LIMIT}`);
  let before = TOP;
  const cursor = q.get('cursor');
  if (cursor !== null) {
    const position = cursors.decode(kind, cursor, 1);
    if (!position) throw invalidField('cursor', 'not a cursor issued for this list');
    before = BigInt(position[0]);
  }
  return { limit, before };
}

export function pageReply<T>(kind: string, items: T[], next: bigint | null, cursors: CursorCodec): { items: T[]; next_cursor: string | null } {
  return { items, next_cursor: next === null ? null : cursors.encode(kind, [next.toString()]) };
}
