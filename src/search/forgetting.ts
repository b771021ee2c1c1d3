// Forgetting the queries nobody searches any more. A query's count decays by half every
// half-life (core/decay.ts) but its row stayed for ever, in perch.db and in LMDB, so both grew with
// every distinct query ever typed. A pass deletes the queries whose value has fallen below
// FORGET_BELOW, far under the half a query needs to be suggested at all (a volume of 1), so no
// answer of GET /api/suggest changes: a forgotten query searched again starts from one hit, where
// it would have had one hit and less than a hundredth.
//
// LMDB first, then SQLite: a pass stopped between the two leaves the queries in SQLite, where the
// next pass finds them again; the other order could leave scores in LMDB that nothing refers to.
// It runs in the same job as the counting, after it, so the two never write at once.
import { valueOfScore } from '../core/decay';
import type { QueryCountStore } from './store';
import type { SuggestionIndex } from './suggestions';

/** A query whose decayed value is below this is forgotten: about 6.6 half-lives after one search. */
export const FORGET_BELOW = 0.01;
/** Queries looked at per step: one LMDB and one SQLite transaction. */
const FORGET_CHUNK = 2000;

export interface ForgetResult {
  /** Queries forgotten. */
  forgotten: number;
  /** Prefix lists removed: every query under them was forgotten. */
  lists: number;
  /** False when the pass ran out of time before the last query. */
  done: boolean;
  /** The last query looked at: a pass not done goes on after it. */
  after: string;
}

export interface ForgettingDeps {
  counts: QueryCountStore;
  suggestions: SuggestionIndex;
  halfLifeMs: number;
}

/** A pass over the counted queries after `after`, in key order, for at most `maxMs`. */
export function forgetQueries(deps: ForgettingDeps, after = '', nowMs = Date.now(), maxMs = 1000): ForgetResult {
  const { counts, suggestions, halfLifeMs } = deps;
  const deadline = performance.now() + maxMs;
  const result: ForgetResult = { forgotten: 0, lists: 0, done: false, after };
  while (performance.now() < deadline) {
    const faded = counts.fadedAfter(after, nowMs, halfLifeMs, FORGET_BELOW, FORGET_CHUNK);
    if (faded.length > 0) {
      result.lists += suggestions.forget(faded, (score) => valueOfScore(score, nowMs, halfLifeMs) < FORGET_BELOW);
      result.forgotten += counts.removeFaded(faded, nowMs, halfLifeMs, FORGET_BELOW);
      after = result.after = faded[faded.length - 1];
    }
    if (faded.length < FORGET_CHUNK) {
      result.done = true;
      break;
    }
  }
  return result;
}
