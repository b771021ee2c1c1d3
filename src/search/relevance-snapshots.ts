// Relevance pages read from one ranking. BM25 scores depend on the whole index (how many posts
// there are, their mean length, how many contain each word), so every post indexed or deleted
// moves every score a little: a cursor that said "continue below score s" would skip or repeat
// posts whose score crossed s between two pages. So the first page of a relevance search ranks
// the best RELEVANCE_WINDOW matches once, keeps that ranking here, and each later page is the next
// slice of it (posts deleted since are skipped when hydrated). The ranking is kept in LMDB, which
// every HTTP thread and process shares, for SNAPSHOT_TTL_MS; a cursor that outlives it is served
// from a fresh ranking at the same offset.
import type { HotStore, LmdbDb } from '../store/lmdb';

export const RELEVANCE_SNAPSHOTS_DB = 'search_relevance_snapshots';

/** The most matches a relevance search ranks, and so pages through: the best ones are what relevance is for. */
export const RELEVANCE_WINDOW = 1000;
export const SNAPSHOT_TTL_MS = 30 * 60 * 1000;

/** [ms when made, node id, sequence]: time-ordered (for the sweep) and unique across threads and processes. */
export type SnapshotKey = [ms: number, nodeId: number, seq: number];

export class RelevanceSnapshots {
  private readonly db: LmdbDb<Buffer, SnapshotKey>;
  private seq = 0;

  constructor(
    hot: HotStore,
    private readonly nodeId: number,
  ) {
    this.db = openSnapshots(hot);
  }

  /**
   * Keeps a ranking and returns its key. Written synchronously: the client may ask for the next
   * page, on any thread, as soon as this one is answered.
   */
  save(ids: readonly bigint[], nowMs = Date.now()): SnapshotKey {
    const key: SnapshotKey = [nowMs, this.nodeId, ++this.seq];
    const buf = Buffer.allocUnsafe(ids.length * 8);
    for (let i = 0; i < ids.length; i++) buf.writeBigInt64BE(ids[i], i * 8);
    this.db.putSync(key, buf);
    return key;
  }

  /** The ranking kept under `key`, or null when it expired (or the hot store lost it). */
  load(key: SnapshotKey, nowMs = Date.now()): bigint[] | null {
    if (key[0] < nowMs - SNAPSHOT_TTL_MS) return null;
    const buf = this.db.get(key);
    if (!buf) return null;
    const ids: bigint[] = [];
    for (let i = 0; i + 8 <= buf.length; i += 8) ids.push(buf.readBigInt64BE(i));
    return ids;
  }
}

function openSnapshots(hot: HotStore): LmdbDb<Buffer, SnapshotKey> {
  return hot.db<Buffer, SnapshotKey>(RELEVANCE_SNAPSHOTS_DB, { encoding: 'binary' });
}

/** Removes the rankings older than the TTL; returns how many. */
export async function sweepSnapshots(hot: HotStore, nowMs = Date.now()): Promise<number> {
  const db = openSnapshots(hot);
  let removed = 0;
  let last: Promise<boolean> | undefined;
  for (const key of db.getKeys({ end: [nowMs - SNAPSHOT_TTL_MS] })) {
    last = db.remove(key as SnapshotKey);
    removed++;
  }
  await last;
  return removed;
}

/** Rankings kept. */
export function snapshotCount(hot: HotStore): number {
  return (openSnapshots(hot).getStats() as { entryCount: number }).entryCount;
}
