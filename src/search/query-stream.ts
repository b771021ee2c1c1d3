// The counting stream: every query a search answered, on its way to the counts behind
// suggestions. The search route only pushes the normalised query onto an in-memory batch; the
// batch goes to LMDB as one un-awaited put once 100 ms have passed since its first query, or as
// soon as it holds 256. A pool task drains the stream every second (counting.ts). Keys are
// [ms of the batch's first query, node id, sequence]: time-ordered, and unique across threads and
// processes because node ids are leased.
import { errorFields, log } from '../log';
import type { HotStore, LmdbDb } from '../store/lmdb';

export const QUERY_STREAM_DB = 'search_query_stream';

export type StreamKey = [ms: number, nodeId: number, seq: number];
/** Flat pairs: query, ms. */
export type StreamBatch = Array<string | number>;

const FLUSH_AFTER_MS = 100;
const FLUSH_AT_QUERIES = 256;

export function openQueryStream(hot: HotStore): LmdbDb<StreamBatch, StreamKey> {
  return hot.db<StreamBatch, StreamKey>(QUERY_STREAM_DB);
}

function onWriteError(err: unknown): void {
  log.error('query stream write failed', errorFields(err));
}

export class QueryStream {
  private readonly db: LmdbDb<StreamBatch, StreamKey>;
  private pending: StreamBatch = [];
  private firstMs = 0;
  private seq = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly flushLater = () => {
    this.timer = null;
    this.flush();
  };

  constructor(
    hot: HotStore,
    private readonly nodeId: number,
  ) {
    this.db = openQueryStream(hot);
  }

  /** Records one answered query; never waits. */
  push(query: string, atMs: number): void {
    if (this.pending.length === 0) {
      this.firstMs = atMs;
      this.timer = setTimeout(this.flushLater, FLUSH_AFTER_MS);
      this.timer.unref();
    }
    this.pending.push(query, atMs);
    if (this.pending.length >= FLUSH_AT_QUERIES * 2) this.flush();
  }

  /** Writes the batch so far as one stream entry (un-awaited). */
  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    this.db.put([this.firstMs, this.nodeId, ++this.seq], batch).catch(onWriteError);
  }

  /** Flushes and waits until the stream holds everything pushed (the thread is stopping). */
  async close(): Promise<void> {
    this.flush();
    await this.db.flushed;
  }
}

/** Entries waiting to be counted. */
export function queryStreamDepth(db: LmdbDb<StreamBatch, StreamKey>): number {
  return (db.getStats() as { entryCount: number }).entryCount;
}
