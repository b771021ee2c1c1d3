// Exponentially decaying query counts. A count is stored as the pair (count, updatedMs): its value
// as of its last update. Its value at any later time is count · 2^-(t − updatedMs)/halfLife, so
// decay needs no rewrite of stored rows; only a query that is searched again is rewritten.
//
// For ranking, a count is also expressed as one number that does not change with time:
//   score = log2(count) + (updatedMs − SCORE_EPOCH_MS) / halfLife
// Its value at time t is 2^(score − (t − SCORE_EPOCH_MS)/halfLife), so for any fixed t the order of two counts by
// value is their order by score. Rankings kept by score (the per-prefix top-K lists) therefore
// stay correct as time passes, and only change when a count is added to. Pure.

/**
 * Scores count half-lives from here (the id epoch) rather than from 1970: a smaller number keeps
 * more of a float64's precision for the count, which matters with a short half-life.
 */
export const SCORE_EPOCH_MS = Date.UTC(2024, 0, 1);

export interface DecayedCount {
  /** The count as of `updatedMs`. */
  count: number;
  updatedMs: number;
}

/** The value of `c` at `atMs`. */
export function valueAt(c: DecayedCount, atMs: number, halfLifeMs: number): number {
  return c.count * Math.pow(2, -(atMs - c.updatedMs) / halfLifeMs);
}

/**
 * `c` (null: never counted) with one hit at each of `hitsMs` (any order) added. The result is
 * dated at the latest of its own date and the hits'; each hit is worth 1 at its own time.
 */
export function addHits(c: DecayedCount | null, hitsMs: readonly number[], halfLifeMs: number): DecayedCount {
  let updatedMs = c ? c.updatedMs : -Infinity;
  for (const t of hitsMs) if (t > updatedMs) updatedMs = t;
  if (updatedMs === -Infinity) throw new Error('addHits needs a count or at least one hit');
  let count = c ? valueAt(c, updatedMs, halfLifeMs) : 0;
  for (const t of hitsMs) count += Math.pow(2, -(updatedMs - t) / halfLifeMs);
  return { count, updatedMs };
}

/** The time-independent ranking score of `c` (see above); -Infinity for a count of 0. */
export function rankScore(c: DecayedCount, halfLifeMs: number): number {
  return Math.log2(c.count) + (c.updatedMs - SCORE_EPOCH_MS) / halfLifeMs;
}

/** The value at `atMs` of a count with ranking score `score`. */
export function valueOfScore(score: number, atMs: number, halfLifeMs: number): number {
  return Math.pow(2, score - (atMs - SCORE_EPOCH_MS) / halfLifeMs);
}

export function halfLifeMs(halfLifeHours: number): number {
  return halfLifeHours * 3_600_000;
}
