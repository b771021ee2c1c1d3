// The limits of the rate-limited endpoints, built from config, and how each behaves when
// the limiter's store fails (see docs/rate-limiting.md):
//   POST /api/shorten  strict per API key: bucket + per-second burst cap + daily quota; fails closed
//   GET /api/search    strict per API key and tier (recent | relevance); fails open
//   GET /{code}        loose per client IP, in memory shared by the HTTP threads; cannot fail
//   POST /{code}       a protected link's wrong passwords, strict per client network and code, and
//                      per code from every client together; fails closed (checked by the link
//                      service, links/service.ts)
import type { Config } from '../config';
import { MAX_WINDOW_LIMIT, peekRules, type CompositeDecision, type LimitRule, type LimitOutcome } from '../core/token-bucket';
import { unavailable } from '../http/errors';
import { errorFields, log } from '../log';
import { rateLimitError, rateLimitHeaders } from './headers';
import { IpBuckets } from './ip-buckets';
import type { SharedLimiter } from './shared';

export type SearchTier = 'recent' | 'relevance';

export function shortenRules(config: Config): LimitRule[] {
  const s = config.limits.shorten;
  return [
    { kind: 'bucket', name: 'shorten', capacity: s.capacity, refillPerSecond: s.refill_per_second },
    burstCap(s.burst_per_second),
    { kind: 'daily', name: 'shorten_daily', limit: s.daily_quota },
  ];
}

/**
 * The per-second burst cap: at most `perSecond` creations in any one second, a sliding window of
 * their times. A bucket of that many tokens refilling as many a second would let nearly twice
 * through within a second (a full bucket, then its refill), and a fixed window twice around its
 * boundary. A window keeps one time per creation it counts, so a cap above MAX_WINDOW_LIMIT
 * (there to be out of the way, not to shape bursts) is kept as such a bucket (docs/rate-limiting.md).
 */
export function burstCap(perSecond: number): LimitRule {
  return perSecond <= MAX_WINDOW_LIMIT
    ? { kind: 'window', name: 'shorten_burst', limit: perSecond, windowMs: 1000 }
    : { kind: 'bucket', name: 'shorten_burst', capacity: perSecond, refillPerSecond: perSecond };
}

export function searchRules(config: Config, tier: SearchTier): LimitRule[] {
  const s = config.limits.search[tier];
  return [{ kind: 'bucket', name: `search_${tier}`, capacity: s.capacity, refillPerSecond: s.refill_per_second }];
}

/** Where the wrong-password limit's records are in the limiter's store: every key starts so. */
export const PASSWORD_GUESSES = 'link_password:';

/** The wrong-password limit of a protected link for one client (limits.link_password). */
export function passwordGuessRules(config: Config): LimitRule[] {
  const g = config.limits.link_password;
  return [{ kind: 'bucket', name: 'link_password', capacity: g.capacity, refillPerSecond: g.refill_per_second }];
}

/**
 * Where the wrong-password limit of a link for all clients together keeps its records, one per
 * code. A prefix of its own: the per-client records' forgetting pass never reads these.
 */
export const LINK_PASSWORD_GUESSES = 'link_password_all_clients:';

/**
 * The wrong-password limit of a protected link for every client together
 * (limits.link_password_all_clients): a client that spreads its guesses over many addresses (a
 * botnet, or the /64s of one IPv6 /48) meets it when it has used up the allowance of the link.
 */
export function linkPasswordGuessRules(config: Config): LimitRule[] {
  const g = config.limits.link_password_all_clients;
  return [{ kind: 'bucket', name: 'link_password_all_clients', capacity: g.capacity, refillPerSecond: g.refill_per_second }];
}

export interface RateLimitHooks {
  rejected(limit: string): void;
}

export class RateLimits {
  private readonly shorten: LimitRule[];
  private readonly search: Record<SearchTier, LimitRule[]>;
  readonly redirect: IpBuckets;

  constructor(
    private readonly config: Config,
    private readonly shared: SharedLimiter,
    private readonly hooks: RateLimitHooks,
    redirectTable: SharedArrayBuffer = IpBuckets.allocate(),
  ) {
    this.shorten = shortenRules(config);
    this.search = { recent: searchRules(config, 'recent'), relevance: searchRules(config, 'relevance') };
    this.redirect = new IpBuckets(
      { capacity: config.limits.redirect.capacity, refillPerSecond: config.limits.redirect.refill_per_second },
      redirectTable,
      'redirect',
    );
  }

  /** Takes one creation from the key's limits; returns the headers for the response, or throws 429. */
  enforceShorten(keyId: string, nowMs = Date.now()): Record<string, string> {
    return this.enforce('shorten:' + keyId, this.shorten, this.config.limits.on_store_error.shorten, nowMs);
  }

  /**
   * Gives the creation taken by enforceShorten back, for a request that then created nothing
   * through no fault of the client (no code available, the store unavailable). Best effort: a
   * store failure here only leaves the creation counted.
   */
  refundShorten(keyId: string, nowMs = Date.now()): void {
    try {
      this.shared.refund('shorten:' + keyId, this.shorten, nowMs);
    } catch (err) {
      log.error('rate limiter store failed', { identity: 'shorten', refund: true, ...errorFields(err) });
    }
  }

  enforceSearch(keyId: string, tier: SearchTier, nowMs = Date.now()): Record<string, string> {
    return this.enforce(`search:${tier}:${keyId}`, this.search[tier], this.config.limits.on_store_error.search, nowMs);
  }

  /**
   * Headers of the key's creation limits as they stand, for a response that consumed nothing.
   * Without a key (a 401), the limits a key starts with.
   */
  peekShorten(keyId: string | null, nowMs = Date.now()): Record<string, string> {
    return this.peek(keyId === null ? null : 'shorten:' + keyId, this.shorten, nowMs);
  }

  peekSearch(keyId: string | null, tier: SearchTier, nowMs = Date.now()): Record<string, string> {
    return this.peek(keyId === null ? null : `search:${tier}:${keyId}`, this.search[tier], nowMs);
  }

  private peek(identity: string | null, rules: LimitRule[], nowMs: number): Record<string, string> {
    if (identity === null) return rateLimitHeaders(peekRules(rules, rules.map(() => undefined), nowMs));
    try {
      return rateLimitHeaders(this.shared.peek(identity, rules, nowMs));
    } catch {
      return {};
    }
  }

  /** Rejects an identity (an anomaly flag) with the contract's 429 and the shorten headers. */
  throttled(keyId: string, retryAfterSeconds: number, message: string, nowMs = Date.now()): never {
    this.hooks.rejected('anomaly');
    const capacity = this.config.limits.shorten.capacity;
    const outcome: LimitOutcome = {
      allowed: false,
      limit: capacity,
      remaining: 0,
      resetUnix: Math.ceil(nowMs / 1000 + retryAfterSeconds),
      retryAfterSeconds: Math.max(1, Math.ceil(retryAfterSeconds)),
    };
    throw rateLimitError(outcome, message, 'anomaly');
  }

  private enforce(identity: string, rules: LimitRule[], onError: 'open' | 'closed', nowMs: number): Record<string, string> {
    let d: CompositeDecision;
    try {
      d = this.shared.check(identity, rules, nowMs);
    } catch (err) {
      log.error('rate limiter store failed', { identity: identity.split(':')[0], fail: onError, ...errorFields(err) });
      if (onError === 'closed') throw unavailable(1, 'Rate limiting is temporarily unavailable; try again shortly.');
      // Failing open: the request goes ahead; the headers show the configured capacity and no
      // consumption, since the real state could not be read.
      const first = rules[0];
      const capacity = first.kind === 'bucket' ? first.capacity : first.limit;
      return rateLimitHeaders({ allowed: true, limit: capacity, remaining: capacity, resetUnix: Math.ceil(nowMs / 1000), retryAfterSeconds: 0 });
    }
    if (!d.allowed) {
      for (const name of d.rejectedBy) this.hooks.rejected(name);
      // The one the headers describe, when it is among those that said no (it is whenever it has no token left).
      throw rateLimitError(d, undefined, d.rejectedBy.includes(d.binding) ? d.binding : d.rejectedBy[0]);
    }
    return rateLimitHeaders(d);
  }
}
