// What is kept of uploaded media, and for how long, apart from I/O. A file uploaded and never
// posted is forgotten `media.unposted_ttl_seconds` after its upload: its uploader meant to post it
// and did not (a draft given up, a client that uploads as images are picked), and it would
// otherwise hold its user's quota and the server's disk for ever. A file once posted stays, its
// posts deleted or not (docs/social.md, "Media"). Files without a row (an upload that failed after
// its file was written, a removal cut short by a crash) are never served nor backed up, and are
// removed once they are old enough to be no upload in progress.
import { isMediaId } from '../core/media-id';

/** Files forgotten per pass of the sweep; a pass that finds more runs again a second later. */
export const UNPOSTED_BATCH = 500;

/** A file without a row is left this long after it was written: its upload may still commit one. */
export const ORPHAN_MIN_AGE_MS = 60 * 60_000;

/** How often the media directory is read for files without a row (the first time, an hour in). */
export const ORPHAN_SWEEP_EVERY_MS = 24 * 60 * 60_000;

/** The longest `media.unposted_ttl_seconds`: ten years (a horizon before it is no date at all). */
export const MAX_UNPOSTED_TTL_SECONDS = 10 * 365 * 24 * 60 * 60;

/**
 * Each pass looks again at the uploads of this span before the last pass's horizon: an upload is
 * stamped before the writer commits its row, so a row can appear behind a horizon already passed.
 */
export const COMMIT_MARGIN_MS = 60_000;

const LONGEST_PERIOD_MS = 10 * 60_000;

/**
 * How often the upkeep runs: a tenth of the time unposted files are kept, 1 s to 10 min; every 10
 * minutes when they are kept for ever (only the daily look for files without a row is left).
 */
export function sweepPeriodMs(ttlMs: number): number {
  if (ttlMs === 0) return LONGEST_PERIOD_MS;
  return Math.min(LONGEST_PERIOD_MS, Math.max(1000, Math.floor(ttlMs / 10)));
}

/** The upload time before which an unposted file is forgotten at `nowMs`. */
export function unpostedHorizon(nowMs: number, ttlMs: number): string {
  return new Date(nowMs - ttlMs).toISOString();
}

/** Where a pass starts looking, the last pass's horizon being `sweptBefore` ('' before the first). */
export function sweepFrom(sweptBefore: string): string {
  return sweptBefore === '' ? '' : new Date(Date.parse(sweptBefore) - COMMIT_MARGIN_MS).toISOString();
}

/**
 * The media id a name of the media directory holds the file of: the name itself, or the name less
 * `.tmp` for a file being written (never served). Undefined for a name that is neither: the
 * directory may hold an operator's files, which are left alone.
 */
export function fileOfName(name: string): { id: string; partial: boolean } | undefined {
  const partial = name.endsWith('.tmp');
  const id = partial ? name.slice(0, -'.tmp'.length) : name;
  return isMediaId(id) ? { id, partial } : undefined;
}
