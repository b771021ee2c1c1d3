// Token-bucket, sliding-window and daily-quota arithmetic, pure: state in, decision and next
// state out. A bucket holds up to `capacity` tokens and refills continuously at `refillPerSecond`
// (fractional tokens accumulate); a request costs one token. A sliding window lets at most `limit`
// requests through in any `windowMs` (it keeps their times). A daily quota counts requests per
// UTC calendar day. Times are milliseconds; the results the API shows are whole seconds.

export interface BucketSpec {
  capacity: number;
  refillPerSecond: number;
}

export interface BucketState {
  tokens: number;
  updatedMs: number;
}

/** Tokens in the bucket at `nowMs`; a clock that moved backwards adds nothing. */
export function refill(state: BucketState | undefined, spec: BucketSpec, nowMs: number): number {
  if (!state) return spec.capacity;
  const elapsed = Math.max(0, nowMs - state.updatedMs) / 1000;
  return Math.min(spec.capacity, state.tokens + elapsed * spec.refillPerSecond);
}

/** Seconds until `tokens` reach `target`, at least 0. */
function secondsUntil(tokens: number, target: number, rate: number): number {
  return tokens >= target ? 0 : (target - tokens) / rate;
}

export interface LimitOutcome {
  allowed: boolean;
  /** The capacity of this limit (X-RateLimit-Limit). */
  limit: number;
  /** Whole requests left after this one (X-RateLimit-Remaining). */
  remaining: number;
  /** Unix seconds, integer, when this limit is full again (X-RateLimit-Reset). */
  resetUnix: number;
  /** When rejected: whole seconds until one request would pass, at least 1. Otherwise 0. */
  retryAfterSeconds: number;
}

export interface BucketDecision extends LimitOutcome {
  /** The state to store if the request goes ahead (the bucket after taking a token). */
  next: BucketState;
}

export function takeToken(state: BucketState | undefined, spec: BucketSpec, nowMs: number): BucketDecision {
  const tokens = refill(state, spec, nowMs);
  // A tiny epsilon absorbs floating-point residue (0.1 + 0.2 style) so a bucket that is "exactly"
  // refilled to one token passes.
  const allowed = tokens + 1e-9 >= 1;
  const after = allowed ? Math.max(0, tokens - 1) : tokens;
  const fullInSeconds = secondsUntil(after, spec.capacity, spec.refillPerSecond);
  return {
    allowed,
    limit: spec.capacity,
    remaining: Math.floor(after + 1e-9),
    resetUnix: Math.ceil((nowMs + fullInSeconds * 1000) / 1000),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(secondsUntil(tokens, 1, spec.refillPerSecond) - 1e-9)),
    next: { tokens: after, updatedMs: Math.max(nowMs, state?.updatedMs ?? nowMs) },
  };
}

export interface QuotaState {
  /** UTC day number (days since 1970-01-01). */
  day: number;
  count: number;
}

export interface QuotaDecision extends LimitOutcome {
  next: QuotaState;
}

const DAY_MS = 86_400_000;

/** The UTC day number of a time (days since 1970-01-01). */
function utcDay(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/** What a quota has counted on the day of `nowMs` (a count of an earlier day is spent). */
function usedToday(state: QuotaState | undefined, nowMs: number): number {
  return state && state.day === utcDay(nowMs) ? state.count : 0;
}

export function takeQuota(state: QuotaState | undefined, limit: number, nowMs: number): QuotaDecision {
  const day = utcDay(nowMs);
  const used = usedToday(state, nowMs);
  const allowed = used < limit;
  const count = allowed ? used + 1 : used;
  const nextDayUnix = ((day + 1) * DAY_MS) / 1000;
  return {
    allowed,
    limit,
    remaining: limit - count,
    // A quota is full again when its day ends (or now, if nothing was used).
    resetUnix: count === 0 ? Math.ceil(nowMs / 1000) : nextDayUnix,
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(nextDayUnix - nowMs / 1000)),
    next: { day, count },
  };
}

export interface WindowSpec {
  limit: number;
  windowMs: number;
}

/** The times of the requests a sliding window let through within its span, oldest first. */
export interface WindowState {
  times: number[];
}

export interface WindowDecision extends LimitOutcome {
  next: WindowState;
}

/**
 * The most requests a sliding window keeps the times of. A window stores one time per request it
 * counts, so larger limits are kept as buckets instead (ratelimit/policies.ts).
 */
export const MAX_WINDOW_LIMIT = 100;

/**
 * The times still inside the window at `nowMs`, oldest first, at most `limit` of them. A time
 * after `nowMs` (a clock that moved backwards) still counts: going back gives nothing back.
 */
function timesInWindow(state: WindowState | undefined, spec: WindowSpec, nowMs: number): number[] {
  if (!state) return [];
  const recent = state.times.filter((t) => t > nowMs - spec.windowMs);
  return recent.length > spec.limit ? recent.slice(recent.length - spec.limit) : recent;
}

/** Unix seconds when a window holding `times` is empty again (now, when it is). */
function windowEmptyUnix(times: number[], spec: WindowSpec, nowMs: number): number {
  return Math.ceil((times.length === 0 ? nowMs : Math.max(nowMs, times[times.length - 1] + spec.windowMs)) / 1000);
}

export function takeFromWindow(state: WindowState | undefined, spec: WindowSpec, nowMs: number): WindowDecision {
  const times = timesInWindow(state, spec, nowMs);
  const allowed = times.length < spec.limit;
  const after = allowed ? [...times, Math.max(nowMs, times[times.length - 1] ?? nowMs)] : times;
  return {
    allowed,
    limit: spec.limit,
    remaining: spec.limit - after.length,
    resetUnix: windowEmptyUnix(after, spec, nowMs),
    // Rejected, the window is full: one request passes once its oldest time leaves it.
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((times[0] + spec.windowMs - nowMs) / 1000 - 1e-9)),
    next: { times: after },
  };
}

export type LimitRule =
  | { kind: 'bucket'; name: string; capacity: number; refillPerSecond: number }
  | { kind: 'window'; name: string; limit: number; windowMs: number }
  | { kind: 'daily'; name: string; limit: number };

export type LimitState = BucketState | WindowState | QuotaState;

export interface CompositeDecision extends LimitOutcome {
  /** The limit the headers describe (the one closest to running out). */
  binding: string;
  /** Names of the limits that rejected the request (empty when allowed). */
  rejectedBy: string[];
  /** Next state of every rule, in rule order; only to be stored when allowed. */
  next: LimitState[];
}

export function evaluateRule(rule: LimitRule, state: LimitState | undefined, nowMs: number): BucketDecision | WindowDecision | QuotaDecision {
  if (rule.kind === 'bucket') return takeToken(state as BucketState | undefined, rule, nowMs);
  if (rule.kind === 'window') return takeFromWindow(state as WindowState | undefined, rule, nowMs);
  return takeQuota(state as QuotaState | undefined, rule.limit, nowMs);
}

/**
 * A request passes only if every rule passes; a rejected request consumes from none of them.
 * The outcome describes the binding rule: fewest whole requests remaining, ties to the one that
 * resets last. When rejected, retry-after is the wait until every rule would pass again.
 */
export function evaluateRules(rules: LimitRule[], states: Array<LimitState | undefined>, nowMs: number): CompositeDecision {
  if (rules.length === 0) throw new Error('no limit rules');
  const decisions = rules.map((rule, i) => evaluateRule(rule, states[i], nowMs));
  const rejectedBy = rules.filter((_, i) => !decisions[i].allowed).map((r) => r.name);
  const allowed = rejectedBy.length === 0;
  // When rejected, nothing is consumed, so every rule is described by its untouched state.
  const shown = allowed ? decisions : rules.map((rule, i) => describeUntouched(rule, states[i], nowMs, decisions[i]));
  const b = bindingIndex(shown);
  return {
    allowed,
    limit: shown[b].limit,
    remaining: shown[b].remaining,
    resetUnix: shown[b].resetUnix,
    retryAfterSeconds: allowed ? 0 : Math.max(...decisions.map((d) => d.retryAfterSeconds)),
    binding: rules[b].name,
    rejectedBy,
    next: decisions.map((d) => d.next),
  };
}

/** The rule closest to running out: fewest whole requests remaining, ties to the one that resets last. */
function bindingIndex(shown: LimitOutcome[]): number {
  let b = 0;
  for (let i = 1; i < shown.length; i++) {
    if (shown[i].remaining < shown[b].remaining || (shown[i].remaining === shown[b].remaining && shown[i].resetUnix > shown[b].resetUnix)) b = i;
  }
  return b;
}

/** A rule's outcome when the request does not consume from it (some other rule rejected). */
function describeUntouched(rule: LimitRule, state: LimitState | undefined, nowMs: number, d: LimitOutcome): LimitOutcome {
  if (!d.allowed) return d;
  if (rule.kind === 'bucket') {
    const tokens = refill(state as BucketState | undefined, rule, nowMs);
    const full = secondsUntil(tokens, rule.capacity, rule.refillPerSecond);
    return { ...d, remaining: Math.floor(tokens + 1e-9), resetUnix: Math.ceil((nowMs + full * 1000) / 1000) };
  }
  if (rule.kind === 'window') {
    const times = timesInWindow(state as WindowState | undefined, rule, nowMs);
    return { ...d, remaining: rule.limit - times.length, resetUnix: windowEmptyUnix(times, rule, nowMs) };
  }
  const q = state as QuotaState | undefined;
  const used = usedToday(q, nowMs);
  return { ...d, remaining: rule.limit - used, resetUnix: used === 0 ? Math.ceil(nowMs / 1000) : d.resetUnix };
}

/** The binding limit as it stands, without taking anything (headers for a request that fails validation). */
export function peekRules(rules: LimitRule[], states: Array<LimitState | undefined>, nowMs: number): LimitOutcome {
  const shown = rules.map((rule, i) => describeUntouched(rule, states[i], nowMs, { ...evaluateRule(rule, states[i], nowMs), allowed: true }));
  const b = bindingIndex(shown);
  return { ...shown[b], allowed: shown.every((s) => s.remaining >= 1), retryAfterSeconds: 0 };
}

/**
 * Gives back one request to every rule (a request that was counted but then not served: the
 * server could not create what it asked for). A bucket gets one token, up to its capacity; a
 * window forgets its newest time; a quota un-counts one request of the current day (a request of
 * an earlier day is already gone from it). Returns the states to store; a rule with no state
 * stays at its default (full).
 */
export function refundRules(rules: LimitRule[], states: Array<LimitState | undefined>, nowMs: number): Array<LimitState | undefined> {
  return rules.map((rule, i) => {
    const state = states[i];
    if (state === undefined) return undefined;
    if (rule.kind === 'bucket') {
      const s = state as BucketState;
      return { tokens: Math.min(rule.capacity, refill(s, rule, nowMs) + 1), updatedMs: Math.max(nowMs, s.updatedMs) };
    }
    if (rule.kind === 'window') return { times: timesInWindow(state as WindowState, rule, nowMs).slice(0, -1) };
    const q = state as QuotaState;
    return q.day === utcDay(nowMs) ? { day: q.day, count: Math.max(0, q.count - 1) } : q;
  });
}

/**
 * Whether stored states say nothing a missing record would not: every bucket refilled to its
 * capacity by `nowMs`, every window empty, every quota of an earlier day or unused. Such a record can be forgotten.
 */
export function atRest(rules: LimitRule[], states: Array<LimitState | undefined>, nowMs: number): boolean {
  return rules.every((rule, i) => {
    const state = states[i];
    if (state === undefined) return true;
    if (rule.kind === 'bucket') return refill(state as BucketState, rule, nowMs) >= rule.capacity;
    if (rule.kind === 'window') return timesInWindow(state as WindowState, rule, nowMs).length === 0;
    return usedToday(state as QuotaState, nowMs) === 0;
  });
}
