// What the indexing consumer needs from a search engine: a bulk write API that either accepts a
// request into the engine's write queue, reporting the queue's depth, or rejects it because the
// queue is full. This is the shape of OpenSearch's `_bulk` API (a 429
// es_rejected_execution_exception when the write thread pool's queue is full, its depth in
// `_nodes/stats/thread_pool/write`), so a bulk client for a cluster can implement it and the
// consumer, its budget and its metrics stay as they are (docs/search.md). The embedded engine
// (embedded-engine.ts) is SQLite FTS5 behind a bounded queue.

/** One write of a bulk request: index a post's text, or delete the post from the index. */
export type IndexOp = { op: 'index'; id: string; text: string } | { op: 'delete'; id: string };

export interface QueueState {
  /**
   * Writes accepted and not yet applied to the index. In an answer to a bulk request: those the
   * request found waiting, before its own (a cluster's node stats report the same, independently
   * of any one request).
   */
  depth: number;
  /** The most writes the queue holds; a request that would exceed it is rejected whole. */
  capacity: number;
}

/**
 * The engine's answer to a bulk request. An accepted request is durable in the engine: it will be
 * applied, in order after every request accepted before it, without being sent again. A rejected
 * one changed nothing and must be sent again later; `reason` says whether the queue was full or
 * the engine could not be reached (busy, down).
 */
export type BulkAnswer = ({ accepted: true } | { accepted: false; reason: 'queue_full' | 'unavailable' }) & QueueState;

export interface SearchEngine {
  bulk(ops: readonly IndexOp[]): Promise<BulkAnswer>;
  queueState(): Promise<QueueState>;
}
