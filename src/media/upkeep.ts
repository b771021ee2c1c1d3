// What is kept of uploaded media, and for how long, apart from I/O. A file uploaded and never
// posted is forgotten `media.unposted_ttl_seconds` after its upload: its uploader meant to post it
// and did not (a draft given up, a client that uploads as images are picked), and it would
// otherwise hold its user's quota and the server's disk for ever. A file once posted stays, its
// posts deleted or not (docs/social.md, "Media"). Files without a row (an upload that failed after
// its file was written, a removal cut short by a crash) are never served nor backed up, and are
// removed once they are old enough to be no upload in progress.

/** Files forgotten per pass of the sweep; a pass that finds more runs again a second later. */
export const UNPOSTED_BATCH = 500;

/** A file without a row is left this long after it was written: its upload may still commit one. */
export const ORPHAN_MIN_AGE_MS = 60 * 60_000;

/** How often the media directory is read for files without a row (the first time, an hour in). */
export const ORPHAN_SWEEP_EVERY_MS = 24 * 60 * 60_000;

/** How often the sweep of unposted files runs: a tenth of the time they are kept, 1 s to 10 min. */
export function sweepPeriodMs(ttlMs: number): number {
  return Math.min(10 * 60_000, Math.max(1000, Math.floor(ttlMs / 10)));
}

/** The upload time before which an unposted file is forgotten at `nowMs`. */
export function unpostedHorizon(nowMs: number, ttlMs: number): string {
  return new Date(nowMs - ttlMs).toISOString();
}

/**
 * The media id a name of the media directory holds the file of: the name itself, or the name less
 * `.tmp` for a file being written (never served). Undefined for a name that is neither: the
 * directory may hold an operator's files, which are left alone.
 */
export function fileOfName(name: string, isMediaId: (s: string) => boolean): { id: string; partial: boolean } | undefined {
  const partial = name.endsWith('.tmp');
  const id = partial ? name.slice(0, -'.tmp'.length) : name;
  return isMediaId(id) ? { id, partial } : undefined;
}
