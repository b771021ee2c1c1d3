// Per-prefix top-K lists of past queries, and the suggestions read from them. Pure.
//
// Queries are ranked by their time-independent score (decay.ts, rankScore): a higher score is a
// higher decayed count at every moment, so a list ordered by score never needs reordering as
// time passes, only when a query's count grows. Scores only grow (a count is only ever added to),
// which is what makes the incremental maintenance exact: a query that is not in a prefix's top K
// can only enter it when its own score grows, and that is exactly when it is offered to the list.
//
// Only prefixes shared by more than K queries ("listed" prefixes) get a stored list. A prefix
// shared by K queries or fewer is answered by reading those queries themselves, which costs at
// most K + 1 reads: either way a lookup costs a function of the prefix's length, never of the
// number of queries that share it.
import { valueOfScore } from './decay';

/** A query and its ranking score. */
export type Scored = [query: string, score: number];

/** The size of every stored list: the largest page of suggestions the API answers. */
export const TOP_K = 20;

/** Higher score first; equal scores by query, so lists are deterministic. */
export function byScore(a: Scored, b: Scored): number {
  return b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
}

/**
 * The top `k` of `list` (sorted by byScore) with `updates` applied: an update replaces the entry
 * of the same query, or is a new entry. Returns null when the list does not change.
 */
export function mergeTopK(list: readonly Scored[], updates: readonly Scored[], k: number): Scored[] | null {
  const entries = new Map<string, Scored>();
  for (const e of list) entries.set(e[0], e);
  let changed = false;
  for (const u of updates) {
    const old = entries.get(u[0]);
    if (old && old[1] === u[1]) continue;
    entries.set(u[0], u);
    changed = true;
  }
  if (!changed) return null;
  const merged = [...entries.values()].sort(byScore).slice(0, k);
  if (merged.length === list.length && merged.every((e, i) => e === list[i])) return null;
  return merged;
}

/** The prefixes of `query` of 1 to `maxChars` code points, shortest first. */
export function prefixesOf(query: string, maxChars: number): string[] {
  const out: string[] = [];
  let end = 0;
  for (const ch of query) {
    if (out.length >= maxChars) break;
    end += ch.length;
    out.push(query.slice(0, end));
  }
  return out;
}

interface Frame {
  prefix: string;
  /** Queries starting with `prefix` seen so far. */
  count: number;
  top: Scored[];
}

/** Inserts `e` into `top` (sorted by byScore), keeping at most `k`. */
function insertTop(top: Scored[], e: Scored, k: number): void {
  let i = top.length;
  while (i > 0 && byScore(e, top[i - 1]) < 0) i--;
  if (i >= k) return;
  top.splice(i, 0, e);
  if (top.length > k) top.pop();
}

/** The top `k` of two lists sorted by byScore (with no query in both). */
function mergeSorted(a: Scored[], b: Scored[], k: number): Scored[] {
  const out: Scored[] = [];
  let i = 0;
  let j = 0;
  while (out.length < k && (i < a.length || j < b.length)) {
    if (j >= b.length || (i < a.length && byScore(a[i], b[j]) <= 0)) out.push(a[i++]);
    else out.push(b[j++]);
  }
  return out;
}

/**
 * Every listed prefix (shared by more than `k` queries; at most `maxChars` code points) with its
 * top `k`, from every query sorted lexicographically (any encoding's byte order will do: the
 * queries sharing a prefix are then consecutive). One pass with a stack of the current query's
 * prefixes, each holding its count and top `k`; a prefix is emitted when the sorted stream leaves
 * it, and handed up to its parent. Memory is O(maxChars · k) whatever the number of queries.
 */
export function* listedPrefixes(sorted: Iterable<Scored>, k: number, maxChars: number): Generator<[prefix: string, top: Scored[]]> {
  const frames: Frame[] = [];
  let previous: string[] = [];
  function* close(depth: number): Generator<[string, Scored[]]> {
    while (frames.length > depth) {
      const f = frames.pop()!;
      if (f.count > k) yield [f.prefix, f.top];
      const parent = frames[frames.length - 1];
      if (parent) {
        parent.count += f.count;
        parent.top = mergeSorted(parent.top, f.top, k);
      }
    }
  }
  for (const entry of sorted) {
    const chars = Array.from(entry[0]).slice(0, maxChars);
    let common = 0;
    while (common < chars.length && common < previous.length && chars[common] === previous[common]) common++;
    yield* close(common);
    let prefix = frames.length > 0 ? frames[frames.length - 1].prefix : '';
    for (let d = frames.length; d < chars.length; d++) {
      prefix += chars[d];
      frames.push({ prefix, count: 0, top: [] });
    }
    const deepest = frames[frames.length - 1];
    if (deepest) {
      deepest.count++;
      insertTop(deepest.top, entry, k);
    }
    previous = chars;
  }
  yield* close(0);
}

export interface Suggestion {
  query: string;
  volume: number;
}

/**
 * The contract's suggestions from candidate queries: volume is the decayed count at `nowMs`,
 * rounded; queries whose count has decayed below one half (volume 0) are left out; sorted by
 * volume, ties by query; at most `limit`.
 */
export function rankSuggestions(candidates: readonly Scored[], nowMs: number, halfLifeMs: number, limit: number): Suggestion[] {
  const out: Suggestion[] = [];
  for (const [query, score] of candidates) {
    const volume = Math.round(valueOfScore(score, nowMs, halfLifeMs));
    if (volume >= 1) out.push({ query, volume });
  }
  out.sort((a, b) => b.volume - a.volume || (a.query < b.query ? -1 : a.query > b.query ? 1 : 0));
  return out.slice(0, limit);
}
