// A load at a fixed rate, sent evenly: the k-th request is due k/rate seconds after the start,
// whatever the answers to the others, as requests from many independent people arrive. It stands
// beside a measured load (bench/post-load.ts), so it is made to cost its machine little: one
// request written per connection at a time from bytes made once, and answers framed by their
// Content-Length and counted, never parsed further.
//
// autocannon's fixed rate sends each connection's quota for a second at the second's start, so
// that a rate arrives as one burst a second; and the time it spends on a request, rate limiting
// included, would be taken from the machine the measured load shares.
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { LoadSummary } from './load';
import { percentile } from './median';

export interface PacedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface PacedOptions {
  url: string;
  /** Requests per second, sent evenly. */
  rate: number;
  seconds: number;
  connections: number;
  /** The request each connection sends, by the connection's index. */
  request(connection: number): PacedRequest;
}

/** How often the pacer looks at the clock, in ms: requests due meanwhile go out together. */
const TICK_MS = 1;
/** The buffer every connection's answers are read into. */
const READ_BUFFER_BYTES = 64 * 1024;
/** How long the answers still in flight are awaited once the run's time is up. */
const DRAIN_MS = 10_000;

/** The requests due by `elapsedMs` into a run at `rate` a second (the first at 0). */
export function dueBy(elapsedMs: number, rate: number): number {
  return Math.floor((elapsedMs * rate) / 1000) + 1;
}

/**
 * Splits a connection's incoming bytes into HTTP/1.1 responses, each framed by its Content-Length,
 * and gives the status of each complete one. Responses without a length (chunked, or read to the
 * connection's end) are refused: the servers measured here never send them.
 */
export class ResponseFramer {
  private head: Buffer | null = null;
  /** Body bytes still to skip of the response whose head was read. */
  private bodyLeft = 0;

  /** The statuses of the responses that `chunk` completed, in order. */
  push(chunk: Buffer): number[] {
    const done: number[] = [];
    let at = 0;
    while (at < chunk.length) {
      if (this.bodyLeft > 0) {
        const take = Math.min(this.bodyLeft, chunk.length - at);
        this.bodyLeft -= take;
        at += take;
        continue;
      }
      const rest = chunk.subarray(at);
      const head = this.head ? Buffer.concat([this.head, rest]) : rest;
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        this.head = Buffer.from(head);
        return done;
      }
      const consumed = end + 4 - (this.head ? this.head.length : 0);
      this.head = null;
      const text = head.toString('latin1', 0, end);
      const status = Number(text.slice(9, 12));
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(text);
      if (!text.startsWith('HTTP/1.1 ') || !(status >= 100 && status < 600) || !length) {
        throw new Error(`not a response with a Content-Length: ${JSON.stringify(text.slice(0, 80))}`);
      }
      this.bodyLeft = Number(length[1]);
      at += consumed;
      done.push(status);
    }
    return done;
  }
}

/**
 * Sends `rate` requests a second for `seconds`, each on the connection that has been idle longest;
 * a request due while every connection waits for an answer goes out on the first to be free, and
 * its latency counts from when it was due. Resolves once every request sent was answered (or its
 * connection failed), with the summary autocannon's runs get.
 */
export function pacedLoad(opts: PacedOptions): Promise<LoadSummary> {
  const target = new URL(opts.url);
  const host = target.hostname.replace(/^\[|\]$/g, '');
  const port = Number(target.port || 80);
  const total = Math.max(1, Math.round(opts.rate * opts.seconds));
  const latencies = new Float64Array(total);
  const byClass = [0, 0, 0, 0, 0, 0];
  let answers = 0;
  let noAnswer = 0;
  let sent = 0;
  let start = 0;
  let lastAnswer = 0;

  interface Conn {
    socket: Socket;
    bytes: Buffer;
    framer: ResponseFramer;
    /** When the request in flight was due, or -1 when none is. */
    dueAt: number;
    open: boolean;
  }
  /** Connections with no request in flight, longest idle first: every connection takes its turn. */
  const free: Conn[] = [];
  const conns: Conn[] = [];

  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    let finished = false;
    const finish = (err?: Error) => {
      if (finished) return;
      finished = true;
      clearInterval(timer);
      clearTimeout(drainTimer);
      for (const c of conns) c.socket.destroy();
      if (err) return reject(err);
      const seconds = Math.max(opts.seconds, (lastAnswer - start) / 1000);
      const sorted = latencies.subarray(0, answers).sort();
      resolve({
        rps: answers / seconds,
        p50_ms: Math.round(percentile(sorted, 0.5) * 100) / 100,
        p99_ms: Math.round(percentile(sorted, 0.99) * 100) / 100,
        max_ms: Math.round(percentile(sorted, 1) * 100) / 100,
        requests: answers,
        status_2xx: byClass[2],
        status_3xx: byClass[3],
        status_4xx: byClass[4],
        status_5xx: byClass[5],
        // Lost with their connection, still in flight when the drain gave up, or never sent.
        no_answer: total - answers,
      });
    };
    let drainTimer: NodeJS.Timeout | undefined;
    const settled = () => answers + noAnswer === sent;
    const maybeDone = () => {
      if (sent === total && settled()) finish();
    };
    const send = (c: Conn) => {
      c.dueAt = start + (sent * 1000) / opts.rate;
      sent++;
      c.socket.write(c.bytes);
    };
    /** Requests due by `now`, the run's last included. */
    const dueCount = (now: number) => Math.min(total, dueBy(now - start, opts.rate));
    const sendDue = () => {
      const due = dueCount(performance.now());
      while (sent < due && free.length > 0) send(free.shift()!);
      if (sent === total) {
        clearInterval(timer);
        drainTimer ??= setTimeout(() => finish(), DRAIN_MS);
        maybeDone();
      }
    };

    const readBuffer = Buffer.alloc(READ_BUFFER_BYTES);
    const answered = (c: Conn, chunk: Buffer): boolean => {
      let statuses: number[];
      try {
        statuses = c.framer.push(chunk);
      } catch (err) {
        finish(err as Error);
        return false;
      }
      for (const status of statuses) {
        const now = performance.now();
        latencies[answers++] = now - c.dueAt;
        lastAnswer = now;
        byClass[Math.floor(status / 100)]++;
        c.dueAt = -1;
        // Straight on with a request already due, else back to the free connections.
        if (sent < dueCount(now)) send(c);
        else free.push(c);
      }
      maybeDone();
      return true;
    };

    let connected = 0;
    for (let i = 0; i < opts.connections; i++) {
      const r = opts.request(i);
      const body = r.body === undefined ? '' : r.body;
      const headers = { host: target.host, ...r.headers, 'content-length': String(Buffer.byteLength(body)) };
      const head = `${r.method} ${r.path} HTTP/1.1\r\n` + Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('') + '\r\n';
      // Answers are read into one buffer that every connection shares (each is framed before the
      // next read), handed over without the stream's 'data' events: a request costs the machine
      // the measured load shares as little as the socket allows.
      const socket = connect({ host, port, onread: { buffer: readBuffer, callback: (n) => answered(c, readBuffer.subarray(0, n)) } });
      const c: Conn = { socket, bytes: Buffer.from(head + body), framer: new ResponseFramer(), dueAt: -1, open: false };
      conns.push(c);
      c.socket.setNoDelay(true);
      c.socket.on('connect', () => {
        c.open = true;
        free.push(c);
        if (++connected === opts.connections) {
          start = performance.now();
          timer = setInterval(sendDue, TICK_MS);
          sendDue();
        }
      });
      c.socket.on('error', () => {});
      c.socket.on('close', () => {
        if (finished) return;
        if (!c.open) return finish(new Error(`could not connect to ${opts.url}`));
        c.open = false;
        if (c.dueAt >= 0) noAnswer++;
        const i = free.indexOf(c);
        if (i >= 0) free.splice(i, 1);
        if (conns.every((x) => !x.open)) return finish(sent === 0 ? new Error(`every connection to ${opts.url} closed`) : undefined);
        maybeDone();
      });
    }
  });
}
