// Anomaly flags: raised by a pool task that evaluates sliding windows of recent creations (off the
// request path), stored durably in SQLite and mirrored into LMDB (user id → flag end, ms) so that
// POST /api/shorten checks a flag with one read. `perch flags clear` lifts both.
import { detectAnomalies, type AnomalyThresholds } from '../core/anomaly';
import type { Config } from '../config';
import type { HotStore, LmdbDb } from '../store/lmdb';
import type { FlagRow, LinkStore } from './store';

export const FLAGS_DB = 'link_flags';

export function openFlagMirror(hot: HotStore): LmdbDb<number, string> {
  return hot.db<number, string>(FLAGS_DB);
}

export function thresholds(config: Config): AnomalyThresholds {
  const a = config.anomaly;
  return { maxLinks: a.max_links, windowSeconds: a.window_seconds, maxSameDomain: a.max_same_domain, domainWindowSeconds: a.domain_window_seconds };
}

export function isActive(f: FlagRow, nowMs: number): boolean {
  return f.cleared_ms === null && f.until_ms > nowMs;
}

/** How far back a pass of the detector looks, in ms before `nowMs`. */
export function detectorHorizon(config: Config, nowMs: number): number {
  const t = thresholds(config);
  return nowMs - Math.max(t.windowSeconds, t.domainWindowSeconds) * 1000;
}

/** One pass of the detector; returns the user ids it flagged. */
export function runDetector(store: LinkStore, mirror: LmdbDb<number, string>, config: Config, nowMs = Date.now()): string[] {
  const t = thresholds(config);
  const creations = store.recentCreations(detectorHorizon(config, nowMs));
  if (creations.length === 0) return [];
  const since = new Map<string, number>();
  const sinceMs = (userId: string): number => {
    let v = since.get(userId);
    if (v === undefined) {
      const f = store.flag(userId);
      // An active flag needs no second verdict; after one ends or is cleared, only creations
      // made after that moment count.
      v = !f ? -Infinity : isActive(f, nowMs) ? Infinity : Math.max(f.flagged_ms, f.cleared_ms ?? 0);
      since.set(userId, v);
    }
    return v;
  };
  const verdicts = detectAnomalies(creations, nowMs, t, sinceMs);
  const untilMs = nowMs + config.anomaly.cooloff_seconds * 1000;
  for (const v of verdicts) {
    store.raiseFlag(v.userId, v.reason, nowMs, untilMs);
    mirror.putSync(v.userId, untilMs);
  }
  return verdicts.map((v) => v.userId);
}

/** Lifts a user's flag in SQLite and in the mirror; false when there was no active flag. */
export function clearFlag(store: LinkStore, mirror: LmdbDb<number, string>, userId: string, nowMs = Date.now()): boolean {
  const f = store.flag(userId);
  const wasActive = f !== undefined && isActive(f, nowMs);
  if (f) store.clearFlag(userId, nowMs);
  mirror.removeSync(userId);
  return wasActive;
}

/**
 * Puts every active flag from SQLite back into the mirror: after the hot store was replaced by
 * an empty one (store/lmdb.ts), a flagged account would otherwise create links freely until its
 * cool-off ended, since the detector gives an active flag no second verdict. Returns the flags put.
 */
export function rebuildFlagMirror(store: LinkStore, mirror: LmdbDb<number, string>, nowMs = Date.now()): number {
  let n = 0;
  for (const f of store.flags()) {
    if (!isActive(f, nowMs)) continue;
    mirror.putSync(f.user_id, f.until_ms);
    n++;
  }
  return n;
}
