// The click queue: a durable queue in LMDB, appended to by the redirect path without waiting, and
// drained in batches by a pool task into SQLite aggregates. The redirect path only pushes onto an
// in-memory array; once per event-loop turn (setImmediate) the turn's clicks go to LMDB as one
// un-awaited put. That is the batching lmdb-js applies to un-awaited puts anyway (they sit in
// memory until the turn's batch commits), at one entry per turn instead of one per click, which
// keeps both the write and the later drain cheap. Keys are [ms of the first click, node id,
// sequence]: time-ordered, and unique across threads and processes because node ids are leased.
import { aggregateClicks, type ClickEvent } from '../core/clicks';
import { errorFields, log } from '../log';
import type { HotStore, LmdbDb } from '../store/lmdb';
import type { LinkStore } from './store';

export const CLICK_QUEUE_DB = 'link_click_queue';

export type ClickKey = [number, number, number];
/** Flat groups of four: code, at (ms), referrer host ('' when none), 1 for a bot else 0. */
export type ClickBatch = Array<string | number>;

/** Clicks per LMDB entry at most; a busier turn writes several entries. */
const MAX_BATCH_CLICKS = 4096;

function onClickWriteError(err: unknown): void {
  log.error('click enqueue failed', errorFields(err));
}

export function openClickQueue(hot: HotStore): LmdbDb<ClickBatch, ClickKey> {
  return hot.db<ClickBatch, ClickKey>(CLICK_QUEUE_DB);
}

export class ClickQueue {
  readonly db: LmdbDb<ClickBatch, ClickKey>;
  private seq = 0;
  private pending: ClickBatch = [];
  private firstMs = 0;
  private lastWrite: Promise<boolean> | undefined;
  private readonly flushSoon: () => void;

  constructor(hot: HotStore, private readonly nodeId: number) {
    this.db = openClickQueue(hot);
    this.flushSoon = () => this.flush();
  }

  /** Appends a click; never waits. */
  push(code: string, atMs: number, referrer: string, bot: boolean): void {
    const p = this.pending;
    if (p.length === 0) {
      this.firstMs = atMs;
      setImmediate(this.flushSoon);
    }
    p.push(code, atMs, referrer, bot ? 1 : 0);
    if (p.length >= MAX_BATCH_CLICKS * 4) this.flush();
  }

  /** Writes the clicks pushed so far as one queue entry (un-awaited). */
  flush(): void {
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    const w = this.db.put([this.firstMs, this.nodeId, ++this.seq], batch);
    // lmdb-js hands every write of one batch the same promise; one handler per batch is enough.
    if (w !== this.lastWrite) {
      this.lastWrite = w;
      w.catch(onClickWriteError);
    }
  }
}

export interface QueueState {
  /** Queue entries (one per event-loop turn of an HTTP thread that served redirects). */
  depth: number;
  /** Seconds since the oldest queued click; 0 when empty. */
  lagSeconds: number;
}

export function clickQueueState(db: LmdbDb<ClickBatch, ClickKey>, nowMs = Date.now()): QueueState {
  const depth = (db.getStats() as { entryCount: number }).entryCount;
  let lagSeconds = 0;
  for (const key of db.getKeys({ limit: 1 })) lagSeconds = Math.max(0, (nowMs - (key as ClickKey)[0]) / 1000);
  return { depth, lagSeconds };
}

/**
 * Links per drain transaction, at most (give or take one queue entry's worth). The drain holds
 * SQLite's write lock for its whole transaction, and post creation's group commits wait for it:
 * 10,000 distinct links in one transaction held it for 70–180 ms, 1,000 hold it for a tenth.
 */
export const DRAIN_BATCH_LINKS = 1000;

/**
 * Moves the queue into the aggregates, in batches of about `batchClicks` clicks or `batchLinks`
 * distinct links, whichever comes first (up to `maxBatches`; by default until the queue is
 * empty). Large, infrequent batches are what keep the drain cheap: a batch costs a few SQLite
 * upserts per distinct link in it, whatever its clicks; the cap on links bounds how long one
 * batch keeps other writers waiting. Each batch is committed to SQLite first and removed from the
 * queue second: a crash in between counts that batch twice rather than losing it (at least
 * once). Returns the clicks moved.
 */
export function drainClicks(
  db: LmdbDb<ClickBatch, ClickKey>,
  store: LinkStore,
  batchClicks = 100_000,
  maxBatches = Infinity,
  batchLinks = DRAIN_BATCH_LINKS,
): number {
  let drained = 0;
  for (let b = 0; b < maxBatches; b++) {
    db.resetReadTxn();
    const keys: ClickKey[] = [];
    const events: ClickEvent[] = [];
    const links = new Set<string>();
    for (const { key, value } of db.getRange({})) {
      keys.push(key as ClickKey);
      for (let i = 0; i + 3 < value.length; i += 4) {
        events.push({ code: value[i] as string, atMs: value[i + 1] as number, referrer: value[i + 2] as string, bot: value[i + 3] === 1 });
        links.add(value[i] as string);
      }
      if (events.length >= batchClicks || links.size >= batchLinks) break;
    }
    if (keys.length === 0) break;
    store.addClicks(aggregateClicks(events));
    db.transactionSync(() => {
      for (const k of keys) db.removeSync(k);
    });
    drained += events.length;
    if (events.length < batchClicks && links.size < batchLinks) break;
  }
  return drained;
}
