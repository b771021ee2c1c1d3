// A writer's client, as every thread that writes holds one: it queues the writes of one
// event-loop turn, sends them to the writer in one message (or one call, when the writer runs in
// the same thread), and settles each write's promise with the writer's answer, which comes only
// after the group transaction holding it was committed and synced.
import type { MessagePort } from 'node:worker_threads';
import { HttpError, unavailable } from '../http/errors';
import type { WriteTable, Writes } from './operations';
import { fromWire, type WireError, type WriteReply, type WriteRequest } from './protocol';

/**
 * The writes waiting for their answers, by number: a ring of slots indexed by the number modulo
 * its size, from the oldest number still waiting on. Numbers are handed out in order and answered
 * about in order, so the ring stays about as large as the writes in flight. (A Map of them rebuilt
 * its hash table as hundreds of writes came and went under load, garbage that often outlived the
 * young generation.)
 */
export class WaitingWrites {
  private resolves: Array<((value: unknown) => void) | undefined> = new Array(64);
  private rejects: Array<((err: unknown) => void) | undefined> = new Array(64);
  /** Every number below this one was answered; it may be waiting. */
  private oldest = 1;
  /** The number the next write gets. */
  private next = 1;
  /** Writes waiting. */
  size = 0;

  /** Files a write's settlement; returns its number. */
  add(resolve: (value: unknown) => void, reject: (err: unknown) => void): number {
    const n = this.next++;
    if (n - this.oldest >= this.resolves.length) this.grow();
    const slot = n & (this.resolves.length - 1);
    this.resolves[slot] = resolve;
    this.rejects[slot] = reject;
    this.size++;
    return n;
  }

  /** Settles write `n` (nothing if it is not waiting): resolved with `value`, or rejected with it. */
  settle(n: number, ok: boolean, value: unknown): void {
    if (n < this.oldest || n >= this.next) return;
    const mask = this.resolves.length - 1;
    const slot = n & mask;
    const resolve = this.resolves[slot];
    const reject = this.rejects[slot];
    if (!resolve || !reject) return;
    this.resolves[slot] = undefined;
    this.rejects[slot] = undefined;
    this.size--;
    while (this.oldest < this.next && this.resolves[this.oldest & mask] === undefined) this.oldest++;
    if (ok) resolve(value);
    else reject(value);
  }

  /** Rejects every waiting write with `err`, oldest first. */
  rejectAll(err: unknown): void {
    for (let n = this.oldest; n < this.next; n++) this.settle(n, false, err);
  }

  /** Twice the slots, each waiting write moved to its place in them. */
  private grow(): void {
    const size = this.resolves.length * 2;
    const resolves: Array<((value: unknown) => void) | undefined> = new Array(size);
    const rejects: Array<((err: unknown) => void) | undefined> = new Array(size);
    const mask = this.resolves.length - 1;
    for (let n = this.oldest; n < this.next; n++) {
      resolves[n & (size - 1)] = this.resolves[n & mask];
      rejects[n & (size - 1)] = this.rejects[n & mask];
    }
    this.resolves = resolves;
    this.rejects = rejects;
  }
}

/** How a WriterClient reaches its writer: a MessagePort to the writer's thread, or a call. */
export interface WriterLink {
  send(request: WriteRequest): void;
  close(): void;
  /**
   * The writer runs on this thread: the turn's writes are sent once the code that made them has
   * run (a microtask), not in the next turn of the event loop, which on a busy thread is a burst
   * of other requests later. A writer on another thread gets one message per turn instead.
   */
  sameThread?: boolean;
}

export class WriterClient {
  private queue: unknown[] = [];
  private scheduled = false;
  private closed = false;
  private readonly waiting = new WaitingWrites();

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
  run(op: string, args: unknown): Promise<unknown> {
    if (this.closed) return Promise.reject(writerGone());
    return new Promise((resolve, reject) => {
      this.queue.push(this.waiting.add(resolve, reject), op, args);
      if (!this.scheduled) {
        this.scheduled = true;
        if (this.link.sameThread) queueMicrotask(this.send);
        else setImmediate(this.send);
      }
    });
  }

  /** This client, typed with the operations of one capability's table. */
  as<T extends WriteTable>(): Writes<T> {
    return this as unknown as Writes<T>;
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
      const ok = reply[i + 1] === 1;
      this.waiting.settle(reply[i] as number, ok, ok ? reply[i + 2] : fromWire(reply[i + 2] as WireError));
    }
  }

  /** The writer is gone: every waiting and later write fails with 503. */
  fail(): void {
    if (this.closed) return;
    this.closed = true;
    this.waiting.rejectAll(writerGone());
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
