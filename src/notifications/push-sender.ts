// Web Push delivery (RFC 8030) from the supervisor's thread: each message is encrypted for its subscription
// (RFC 8291, aes128gcm) and signed for the push service (RFC 8292, VAPID) by the web-push package,
// and sent here with Node's own HTTP client, which lets this code pin the address it connects to
// (below) and bound every request in time.
//
// - Independence: each push service (origin) has a queue and at most PER_ORIGIN requests in flight
//   of its own, and the delivery task only queues: a slow or hanging push service fills its own
//   slots and nothing else, and never holds up the WebSocket deliveries or other recipients.
// - Retries: 429, 5xx and network failures are tried again after retry_base_ms, doubling each
//   time (a 429's Retry-After is honoured when longer), at most MAX_TRIES tries in all.
// - Cleanup: 404 and 410 mean the subscription is gone: it is reported (`gone`) and deleted.
// - Server-side request forgery: unless push.allow_insecure_endpoints, the endpoint's name is
//   resolved before each request, every address it has must be public, and the request connects
//   to the address that was checked (a name cannot resolve to a public address for the check and
//   a private one for the connection).
// - It runs on the supervisor's thread, whose event loop always runs: a pool thread's does not
//   between its tasks (piscina parks idle threads in Atomics.wait), so requests and retry timers
//   left running there after a task would stall until the next task. What is queued lives in
//   this thread's memory: at shutdown the sender gets a moment to finish (module.ts), and a message
//   still waiting after it is not sent (the notification itself is kept, and listed).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isPublicAddress } from '../core/public-address';
import { log } from '../log';
import type { PushTarget } from './store';

export type PushOutcome = 'delivered' | 'retried' | 'gone' | 'failed' | 'refused' | 'dropped';

export const PUSH_OUTCOMES: readonly PushOutcome[] = ['delivered', 'retried', 'gone', 'failed', 'refused', 'dropped'];

/** Seconds a push service keeps an undelivered message (contract: TTL 86400). */
export const PUSH_TTL_SECONDS = 86_400;
export const MAX_TRIES = 5;
/** Requests in flight per push service at most. */
const PER_ORIGIN = 8;
/** One request's time limit, connection included. */
const REQUEST_TIMEOUT_MS = 10_000;
/** Messages waiting (queued or between tries) at most; beyond, new ones are dropped. */
const MAX_WAITING = 10_000;
/** A 429's Retry-After is honoured up to this long. */
const MAX_RETRY_AFTER_MS = 10 * 60_000;
/** A VAPID signature is valid 12 h; it is reused for an hour per push service. */
const VAPID_EXPIRY_SECONDS = 12 * 60 * 60;
const VAPID_REUSE_MS = 60 * 60_000;

export interface VapidDetails {
  subject: string;
  publicKey: string;
  privateKey: string;
}

export interface PushSenderOptions {
  vapid: VapidDetails;
  allowInsecure: boolean;
  retryBaseMs: number;
  /** Every outcome (a retry counts as one, and the message goes on). */
  report(outcome: PushOutcome): void;
  /** A subscription whose push service answered 404 or 410. */
  gone(target: PushTarget): void;
}

interface Job {
  target: PushTarget;
  url: URL;
  payload: string;
  tries: number;
  body?: Buffer;
  headers?: Record<string, string | number>;
}

interface Origin {
  queue: Job[];
  active: number;
}

const agents = {
  http: new HttpAgent({ keepAlive: true, maxSockets: PER_ORIGIN }),
  https: new HttpsAgent({ keepAlive: true, maxSockets: PER_ORIGIN }),
};

export class PushSender {
  private readonly origins = new Map<string, Origin>();
  private readonly vapidHeaders = new Map<string, { authorization: string; until: number }>();
  private waiting = 0;
  private lastDropLog = 0;

  constructor(private readonly opts: PushSenderOptions) {}

  /** Messages queued or waiting for a retry. */
  get pending(): number {
    return this.waiting;
  }

  /** Queues one message for one subscription; returns at once. */
  send(target: PushTarget, payload: string): void {
    if (this.waiting >= MAX_WAITING) {
      this.opts.report('dropped');
      const now = Date.now();
      if (now - this.lastDropLog > 10_000) {
        this.lastDropLog = now;
        log.warn('push messages dropped: too many waiting', { waiting: this.waiting });
      }
      return;
    }
    let url: URL;
    try {
      url = new URL(target.endpoint);
    } catch {
      this.opts.report('failed');
      return;
    }
    this.waiting++;
    this.enqueue({ target, url, payload, tries: 0 });
  }

  private enqueue(job: Job): void {
    let origin = this.origins.get(job.url.origin);
    if (!origin) this.origins.set(job.url.origin, (origin = { queue: [], active: 0 }));
    origin.queue.push(job);
    this.pump(job.url.origin, origin);
  }

  private pump(key: string, origin: Origin): void {
    while (origin.active < PER_ORIGIN && origin.queue.length > 0) {
      const job = origin.queue.shift()!;
      origin.active++;
      void this.attempt(job).finally(() => {
        origin.active--;
        if (origin.active === 0 && origin.queue.length === 0) this.origins.delete(key);
        else this.pump(key, origin);
      });
    }
  }

  private async attempt(job: Job): Promise<void> {
    job.tries++;
    let status: number;
    let retryAfterMs = 0;
    try {
      const address = await this.checkedAddress(job.url);
      if (address === null) return this.finish('refused', job, 'the endpoint resolves to a private or reserved address');
      this.prepare(job);
      const res = await this.post(job, address);
      status = res.status;
      retryAfterMs = res.retryAfterMs;
    } catch (err) {
      status = 0;
      log.debug('push request failed', { endpoint_origin: job.url.origin, error: (err as Error).message });
    }
    if (status >= 200 && status < 300) return this.finish('delivered', job);
    if (status === 404 || status === 410) {
      this.opts.gone(job.target);
      return this.finish('gone', job);
    }
    const retryable = status === 0 || status === 429 || status >= 500;
    if (!retryable || job.tries >= MAX_TRIES) return this.finish('failed', job, `status ${status || 'network error'} after ${job.tries} tries`);
    this.opts.report('retried');
    const backoff = this.opts.retryBaseMs * 2 ** (job.tries - 1);
    const delay = Math.max(backoff, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
    setTimeout(() => this.enqueue(job), delay).unref();
  }

  private finish(outcome: PushOutcome, job: Job, why?: string): void {
    this.waiting--;
    this.opts.report(outcome);
    if (why) log.info('push message not delivered', { outcome, subscription_id: job.target.id, endpoint_origin: job.url.origin, reason: why });
  }

  /** The encrypted body and headers, made on the first try and kept for the others. */
  private prepare(job: Job): void {
    if (job.body) return;
    const details = webPush().generateRequestDetails(
      { endpoint: job.target.endpoint, keys: { p256dh: job.target.p256dh, auth: job.target.auth } },
      job.payload,
      { TTL: PUSH_TTL_SECONDS, contentEncoding: 'aes128gcm', headers: { Authorization: this.vapidAuthorization(job.url.origin) } },
    );
    job.body = details.body as Buffer;
    job.headers = details.headers as Record<string, string | number>;
  }

  private vapidAuthorization(audience: string): string {
    const now = Date.now();
    const cached = this.vapidHeaders.get(audience);
    if (cached && cached.until > now) return cached.authorization;
    const { subject, publicKey, privateKey } = this.opts.vapid;
    const expiration = Math.floor(now / 1000) + VAPID_EXPIRY_SECONDS;
    const authorization = webPush().getVapidHeaders(audience, subject, publicKey, privateKey, 'aes128gcm', expiration).Authorization;
    this.vapidHeaders.set(audience, { authorization, until: now + VAPID_REUSE_MS });
    return authorization;
  }

  /** The address to connect to, or null when the endpoint may not be reached. */
  private async checkedAddress(url: URL): Promise<LookupAddress | null> {
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const family = isIP(host);
    if (family !== 0) return this.opts.allowInsecure || isPublicAddress(host) ? { address: host, family } : null;
    const addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
      dnsLookup(host, { all: true }, (err, list) => (err ? reject(err) : resolve(list))),
    );
    if (addresses.length === 0) throw new Error(`${host} has no address`);
    if (!this.opts.allowInsecure && !addresses.every((a) => isPublicAddress(a.address))) return null;
    return addresses[0];
  }

  private post(job: Job, address: LookupAddress): Promise<{ status: number; retryAfterMs: number }> {
    const https = job.url.protocol === 'https:';
    // Connects to the checked address whatever the name resolves to by then; TLS still verifies
    // the certificate against the name.
    const lookup: LookupFunction = (_host, options, callback) => {
      if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, [address]);
      else callback(null, address.address, address.family);
    };
    return new Promise((resolve, reject) => {
      const req = (https ? httpsRequest : httpRequest)(
        job.url,
        { method: 'POST', headers: job.headers, agent: https ? agents.https : agents.http, lookup, timeout: REQUEST_TIMEOUT_MS },
        (res: IncomingMessage) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfterMs: retryAfter(res.headers['retry-after']) }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error('push request timed out')));
      req.on('error', reject);
      req.end(job.body);
    });
  }
}

/** A Retry-After header (seconds or an HTTP date) in milliseconds; 0 when absent or unreadable. */
export function retryAfter(value: string | undefined, now = Date.now()): number {
  if (!value) return 0;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? 0 : Math.max(0, at - now);
}

/**
 * web-push, loaded when the first message is made: a server nobody subscribed to never needs it,
 * and a module loaded stays in the heap of the thread for good (docs/memory.md).
 */
function webPush(): typeof import('web-push') {
  return require('web-push') as typeof import('web-push');
}
