// Group commit by the server's one writer (server/writer.ts). HTTP threads send their durable
// writes as named operations (social/writes.ts, links/writes.ts) to the writer, once per
// event-loop turn with all of that turn's writes: a message when the writer has a thread of its
// own, a call when it runs in the same thread. The writer takes everything that has arrived, runs
// it in a single SQLite transaction, commits, and answers each thread once a sync of the log
// covers that commit (store/wal-sync.ts). A write that fails (a check made inside the
// transaction) rolls back alone and is answered with its error while the others commit. While a
// sync runs, new writes queue up, so batches grow with load and the HTTP threads never wait on
// the disk themselves.
import type { MessagePort } from 'node:worker_threads';
import type { Transaction } from 'better-sqlite3';
import type { Sqlite } from '../store/sqlite';
import { HttpError, unavailable, type ErrorCode } from '../http/errors';
import type { WriteArgs, WriteExecutor, WriteOpName, WriteResults } from '../server/write-ops';

/** HTTP thread → writer: flat triples of request number, operation name, arguments. */
export type WriteRequest = unknown[];
/** Writer → HTTP thread: flat triples of request number, 1 (ok) or 0 (failed), result or error. */
export type WriteReply = unknown[];

/** An error as it crosses threads; an HttpError keeps everything needed to answer with it. */
export type WireError =
  | { http: true; code: ErrorCode; message: string; extra: Record<string, unknown>; headers: Record<string, string> }
  | { http: false; message: string; name: string };

export function toWire(err: unknown): WireError {
  if (err instanceof HttpError) return { http: true, code: err.code, message: err.message, extra: err.extra, headers: err.headers };
  const e = err instanceof Error ? err : new Error(String(err));
  return { http: false, message: e.message, name: e.name };
}

export function fromWire(w: WireError): Error {
  if (w.http) return new HttpError(w.code, w.message, w.extra, w.headers);
  const e = new Error(w.message);
  e.name = w.name;
  return e;
}

export type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * After a batch had to run twice, this many following batches run with savepoints at once: a
 * stream of failing writes (likes of a deleted post, say) then costs the savepoints, about a
 * tenth more, instead of every batch it lands in running twice.
 */
export const ISOLATED_AFTER_RERUN = 64;

/**
 * The writer's side: runs a batch of operations in one synced transaction. A batch first runs
 * plainly, all writes in one go; if any write fails, that attempt is rolled back as a whole and
 * the batch runs again with a savepoint per write, so the failing write rolls back alone. Writes
 * are deterministic in the store's state and their arguments (ids and times are minted before),
 * so the second run answers exactly as the first would have. Savepoints cost about a tenth of
 * the writer's time per post, and most batches hold no failing write; while failing writes keep
 * coming (ISOLATED_AFTER_RERUN), batches skip the plain attempt. The plain attempt also runs each
 * run of consecutive writes that has a bulk form (plain posts) in one call.
 */
export class GroupCommit {
  private readonly plain: Transaction<(ops: Array<[WriteOpName, unknown]>, out: Outcome[]) => void>;
  private readonly isolated: Transaction<(ops: Array<[WriteOpName, unknown]>, out: Outcome[]) => void>;
  /**
   * Transactions committed, writes they carried, batches that needed the second run, and batches
   * run with savepoints from the start.
   */
  readonly stats = { commits: 0, writes: 0, reruns: 0, isolated: 0 };
  /** Batches still to run with savepoints from the start, after the last rerun. */
  private isolatedLeft = 0;

  constructor(db: Sqlite, exec: WriteExecutor) {
    this.plain = db.transaction((ops: Array<[WriteOpName, unknown]>, out: Outcome[]) => {
      for (let i = 0; i < ops.length; ) {
        const [name, args] = ops[i];
        // A run of consecutive writes that have a bulk form goes in one call.
        let end = i + 1;
        if (exec.bulkable(name, args)) while (end < ops.length && ops[end][0] === name && exec.bulkable(name, ops[end][1])) end++;
        if (end - i === 1) {
          out.push({ ok: true, value: exec(name, args) });
        } else {
          for (const value of exec.bulk(name, ops.slice(i, end).map((op) => op[1]))) out.push({ ok: true, value });
        }
        i = end;
      }
    });
    const savepoint = db.transaction(exec);
    this.isolated = db.transaction((ops: Array<[WriteOpName, unknown]>, out: Outcome[]) => {
      for (const [name, args] of ops) {
        try {
          out.push({ ok: true, value: savepoint(name, args) });
        } catch (error) {
          out.push({ ok: false, error });
        }
      }
    });
  }

  /**
   * One outcome per operation, in order; none is final before the commit returns. Throws
   * SQLITE_BUSY when another connection holds the write lock (nothing ran): try again later.
   */
  commit(ops: Array<[WriteOpName, unknown]>): Outcome[] {
    let out: Outcome[] = [];
    if (this.isolatedLeft > 0) {
      const result = this.runIsolated(ops, out);
      if (result) return result;
      this.isolatedLeft--;
      this.stats.isolated++;
    } else {
      try {
        this.plain.immediate(ops, out);
      } catch (error) {
        if (isBusy(error)) throw error;
        // Rolled back whole: run again with each write isolated.
        this.stats.reruns++;
        this.isolatedLeft = ISOLATED_AFTER_RERUN;
        out = [];
        const result = this.runIsolated(ops, out);
        if (result) return result;
      }
    }
    this.stats.commits++;
    this.stats.writes += ops.length;
    return out;
  }

  /** Runs the batch with a savepoint per write into `out`; returns outcomes only if the whole failed. */
  private runIsolated(ops: Array<[WriteOpName, unknown]>, out: Outcome[]): Outcome[] | null {
    try {
      this.isolated.immediate(ops, out);
      return null;
    } catch (error) {
      if (isBusy(error)) throw error;
      // The transaction as a whole failed (disk full, I/O error): nothing of it committed.
      return ops.map(() => ({ ok: false, error }));
    }
  }
}

/** SQLite's answer when another connection holds the write lock (with no busy timeout to wait). */
export function isBusy(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'SQLITE_BUSY';
}

interface Waiting {
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/** How a WriterClient reaches its writer: a MessagePort to the writer's thread, or a call. */
export interface WriterLink {
  send(request: WriteRequest): void;
  close(): void;
}

/** The HTTP thread's side: queues this turn's writes, sends them in one message, awaits replies. */
export class WriterClient {
  private seq = 0;
  private queue: unknown[] = [];
  private scheduled = false;
  private closed = false;
  private readonly waiting = new Map<number, Waiting>();

  constructor(private readonly link: WriterLink) {}

  /** A client of a writer on another thread, at the other end of `port`. */
  static overPort(port: MessagePort): WriterClient {
    const client = new WriterClient({ send: (request) => port.postMessage(request), close: () => port.close() });
    port.on('message', (reply: WriteReply) => client.receive(reply));
    // The writer's port closes when the writer thread ends, on purpose or not: nothing that is
    // still waiting will ever be answered.
    port.on('close', () => client.fail());
    // Replies are only awaited by requests, which keep the thread alive on their own.
    port.unref();
    return client;
  }

  /** Runs a named write in the writer's next group transaction; resolves after its commit. */
  run<K extends WriteOpName>(op: K, args: WriteArgs[K]): Promise<WriteResults[K]> {
    if (this.closed) return Promise.reject(writerGone());
    const n = ++this.seq;
    return new Promise<WriteResults[K]>((resolve, reject) => {
      this.waiting.set(n, { resolve: resolve as (v: unknown) => void, reject });
      this.queue.push(n, op, args);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.send);
      }
    });
  }

  /** Writes sent and not yet answered. */
  get pending(): number {
    return this.waiting.size;
  }

  close(): void {
    this.link.close();
    this.fail();
  }

  /** The writer's answers to earlier requests. */
  receive(reply: WriteReply): void {
    for (let i = 0; i < reply.length; i += 3) {
      const w = this.waiting.get(reply[i] as number);
      if (!w) continue;
      this.waiting.delete(reply[i] as number);
      if (reply[i + 1] === 1) w.resolve(reply[i + 2]);
      else w.reject(fromWire(reply[i + 2] as WireError));
    }
  }

  /** The writer is gone: every waiting and later write fails with 503. */
  fail(): void {
    if (this.closed) return;
    this.closed = true;
    const err = writerGone();
    for (const w of this.waiting.values()) w.reject(err);
    this.waiting.clear();
  }

  private readonly send = (): void => {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (this.closed) return;
    this.link.send(batch satisfies WriteRequest);
  };
}

function writerGone(): HttpError {
  return unavailable(1, 'The database writer is not running; try again shortly.');
}
