// Publish/subscribe between the threads of this process: typed topics, each a BroadcastChannel.
// HTTP threads use it to drop a cache entry in every thread at once, and background work to reach
// whichever HTTP thread holds a client's connection. A publisher can wait for its peers to have
// handled a message (publishAndWait). The interface is what capabilities see, so a port between
// processes or machines can take the place of this one without changing them.
import { BroadcastChannel, threadId } from 'node:worker_threads';
import { errorFields, log } from '../log';

/** A topic's name, and the type of its messages (for the compiler only). */
export interface Topic<T> {
  readonly name: string;
  /** Never set: carries T. */
  readonly message?: T;
}

export function topic<T>(name: string): Topic<T> {
  return { name };
}

export interface PubSub {
  /** Sends to every other subscriber of the topic in this process; never waits. */
  publish<T>(topic: Topic<T>, message: T): void;
  /**
   * Sends, and resolves once every peer thread has run its handlers for it (true), or after
   * `timeoutMs` (false, and a warning in the log). Peers are the port's other threads, each
   * expected to subscribe to the topic.
   */
  publishAndWait<T>(topic: Topic<T>, message: T, timeoutMs?: number): Promise<boolean>;
  /** Calls `handler` for each message of the topic published by another thread. */
  subscribe<T>(topic: Topic<T>, handler: (message: T) => void): () => void;
  close(): void;
}

/** `from`: the port that sent an acknowledgement, or that closed (`leave`). */
type Envelope = { k: 'msg'; id: string; body: unknown; ack: boolean } | { k: 'ack'; id: string; from: string } | { k: 'leave'; from: string };

/** Ports made in this thread so far: with the thread and process, each port's own name. */
let portsMade = 0;

interface Channel {
  channel: BroadcastChannel;
  handlers: Set<(message: unknown) => void>;
}

/**
 * The port of one thread. `peers`: the other threads of the process that subscribe to the same
 * topics (the other HTTP threads), whose acknowledgements publishAndWait waits for. A port that
 * closes says so on its channels: a thread that stops first (at shutdown) is then no longer
 * waited for by those still answering their last requests.
 */
export class ThreadPubSub implements PubSub {
  private readonly channels = new Map<string, Channel>();
  private readonly pending = new Map<string, { waiting: number; acked: Set<string>; done: (ok: boolean) => void }>();
  private counter = 0;
  private closed = false;
  private readonly id = `${process.pid}:${threadId}:${++portsMade}`;
  /** Peers that closed their port. */
  private readonly left = new Set<string>();
  /**
   * Whether this port is one of the peers the others count (it has peers itself: an HTTP thread
   * of several). Only such a port says it leaves; a port with none (a pool thread, the
   * supervisor, the only HTTP thread) is waited for by nobody.
   */
  private readonly counted: boolean;

  constructor(private peers: number) {
    this.counted = peers > 0;
  }

  publish<T>(topic: Topic<T>, message: T): void {
    if (this.closed) return;
    this.channel(topic.name).channel.postMessage({ k: 'msg', id: '', body: message, ack: false } satisfies Envelope);
  }

  publishAndWait<T>(topic: Topic<T>, message: T, timeoutMs = 500): Promise<boolean> {
    if (this.peers === 0 || this.closed) return Promise.resolve(true);
    const id = `${process.pid}:${threadId}:${++this.counter}`;
    const ch = this.channel(topic.name);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        if (!this.pending.delete(id)) return;
        log.warn('a message was not acknowledged by every thread', { topic: topic.name });
        resolve(false);
      }, timeoutMs);
      this.pending.set(id, {
        waiting: this.peers,
        acked: new Set(),
        done: (ok) => {
          clearTimeout(timer);
          resolve(ok);
        },
      });
      ch.channel.postMessage({ k: 'msg', id, body: message, ack: true } satisfies Envelope);
    });
  }

  subscribe<T>(topic: Topic<T>, handler: (message: T) => void): () => void {
    const ch = this.channel(topic.name);
    const h = handler as (message: unknown) => void;
    ch.handlers.add(h);
    return () => ch.handlers.delete(h);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const ch of this.channels.values()) {
      // After every acknowledgement it sent on the channel, which arrive first.
      if (this.counted) ch.channel.postMessage({ k: 'leave', from: this.id } satisfies Envelope);
      ch.channel.close();
    }
    this.channels.clear();
    for (const p of this.pending.values()) p.done(false);
    this.pending.clear();
  }

  private channel(name: string): Channel {
    let ch = this.channels.get(name);
    if (ch) return ch;
    const channel = new BroadcastChannel(`perch.${name}`);
    const entry: Channel = { channel, handlers: new Set() };
    channel.onmessage = (ev) => this.receive(entry, (ev as MessageEvent).data as Envelope);
    // Subscriptions never keep a thread alive on their own.
    (channel as unknown as { unref(): void }).unref();
    this.channels.set(name, entry);
    return entry;
  }

  private receive(ch: Channel, m: Envelope): void {
    if (m.k === 'ack') {
      const p = this.pending.get(m.id);
      if (p && !p.acked.has(m.from)) {
        p.acked.add(m.from);
        this.answered(m.id, p);
      }
      return;
    }
    if (m.k === 'leave') {
      // Said on each of its channels: counted once. What it had not acknowledged, it never will.
      if (this.left.has(m.from)) return;
      this.left.add(m.from);
      this.peers = Math.max(0, this.peers - 1);
      for (const [id, p] of this.pending) if (!p.acked.has(m.from)) this.answered(id, p);
      return;
    }
    for (const handler of ch.handlers) {
      try {
        handler(m.body);
      } catch (err) {
        log.error('a message handler failed', errorFields(err));
      }
    }
    // A handler may have closed the port (its thread stopping): the leave says the rest.
    if (m.ack && !this.closed) ch.channel.postMessage({ k: 'ack', id: m.id, from: this.id } satisfies Envelope);
  }

  /** One peer fewer to wait for; the message is done when none is left. */
  private answered(id: string, p: { waiting: number; done: (ok: boolean) => void }): void {
    if (--p.waiting > 0) return;
    this.pending.delete(id);
    p.done(true);
  }
}
