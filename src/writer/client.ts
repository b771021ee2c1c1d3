// A writer's client, as every thread that writes holds one: it queues the writes of one
// event-loop turn, sends them to the writer in one message (or one call, when the writer runs in
// the same thread), and settles each write's promise with the writer's answer, which comes only
// after the group transaction holding it was committed and synced.
import type { MessagePort } from 'node:worker_threads';
import { HttpError, unavailable } from '../http/errors';
import type { WriteTable, Writes } from './operations';
import { fromWire, type WireError, type WriteReply, type WriteRequest } from './protocol';

interface Waiting {
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/** How a WriterClient reaches its writer: a MessagePort to the writer's thread, or a call. */
export interface WriterLink {
  send(request: WriteRequest): void;
  close(): void;
}

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
  run(op: string, args: unknown): Promise<unknown> {
    if (this.closed) return Promise.reject(writerGone());
    const n = ++this.seq;
    return new Promise((resolve, reject) => {
      this.waiting.set(n, { resolve, reject });
      this.queue.push(n, op, args);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.send);
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
