// Pool tasks of the short-link capability (LINK_TASKS, registered by module.ts). Each pool thread
// keeps one LinkStore per SQLite handle.
import type { TaskContext } from '../workers/context';
import { runDetector, openFlagMirror } from './anomaly';
import { drainClicks, openClickQueue } from './clicks';
import { CodePool } from './code-pool';
import { REDIRECT_CACHE_DB } from './cache';
import { LinkStore } from './store';
import { MINUTE_MS } from '../core/clicks';

const stores = new WeakMap<object, LinkStore>();
/** The LinkStore of a pool thread. */
function storeOf(ctx: TaskContext): LinkStore {
  let s = stores.get(ctx.sqlite);
  if (!s) stores.set(ctx.sqlite, (s = new LinkStore(ctx.sqlite)));
  return s;
}

export interface RefillPayload {
  /** Refill only when the pool holds fewer codes than this (default: links.pool_low_water). */
  below?: number;
}

export function refillCodePool(ctx: TaskContext, payload?: RefillPayload): { added: number; size: number } {
  const store = storeOf(ctx);
  const pool = new CodePool(ctx.hot);
  const below = payload?.below ?? ctx.config.links.pool_low_water;
  if (pool.size() >= below) return { added: 0, size: pool.size() };
  const added = pool.refill(store, ctx.config.links.pool_target, ctx.config.links.code_length);
  return { added, size: pool.size() };
}

export function drainClickQueue(ctx: TaskContext): { drained: number } {
  return { drained: drainClicks(openClickQueue(ctx.hot), storeOf(ctx)) };
}

export function detectLinkAnomalies(ctx: TaskContext): { flagged: string[] } {
  return { flagged: runDetector(storeOf(ctx), openFlagMirror(ctx.hot), ctx.config) };
}

/** The newest minute bucket the sweep prunes: only last_24h reads them, so an hour of margin. */
export function prunableMinute(nowMs: number): number {
  return Math.floor(nowMs / MINUTE_MS) - 25 * 60;
}

/**
 * Retires links whose expiry has passed (they keep answering 410) and drops them from the shared
 * redirect cache; prunes the minute buckets that only last_24h reads.
 */
export function sweepExpiredLinks(ctx: TaskContext): { retired: number; pruned: number } {
  const store = storeOf(ctx);
  const cache = ctx.hot.db(REDIRECT_CACHE_DB);
  const now = Date.now();
  let retired = 0;
  for (;;) {
    const codes = store.retireExpired(now, 1000);
    if (codes.length) {
      cache.transactionSync(() => {
        for (const c of codes) cache.removeSync(c);
      });
    }
    retired += codes.length;
    if (codes.length < 1000) break;
  }
  const pruned = store.pruneMinutes(prunableMinute(now));
  return { retired, pruned };
}

export const LINK_TASKS = {
  'links.refillPool': refillCodePool,
  'links.drainClicks': drainClickQueue,
  'links.detectAnomalies': detectLinkAnomalies,
  'links.sweepExpired': sweepExpiredLinks,
};
