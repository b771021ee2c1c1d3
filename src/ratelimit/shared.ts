// The strict limiter: bucket state in LMDB, read-refill-decrement-write inside one LMDB write
// transaction, so every HTTP thread and every process on the data dir sees one bucket and two
// concurrent requests can never both take the last token.
import { atRest, evaluateRules, peekRules, refundRules, type CompositeDecision, type LimitOutcome, type LimitRule, type LimitState } from '../core/token-bucket';
import type { HotStore, LmdbDb } from '../store/lmdb';

// One record per identity and rule set, the rules' states one after another with no
// serialisation, so a check is one small get and one small put: a bucket or a quota is two
// float64 (tokens and updated ms; day and count), a window a float64 count and that many times.
// A window's length follows its count, not its limit, so a changed limit keeps the record.
function decode(buf: Buffer | undefined, rules: LimitRule[]): Array<LimitState | undefined> {
  const none = () => rules.map(() => undefined);
  if (!buf || buf.length % 8 !== 0) return none();
  const out: Array<LimitState | undefined> = [];
  let at = 0;
  for (const rule of rules) {
    if (at + 8 > buf.length) return none();
    const a = buf.readDoubleLE(at);
    if (rule.kind === 'window') {
      if (!Number.isInteger(a) || a < 0 || at + 8 + a * 8 > buf.length) return none();
      const times: number[] = [];
      for (let i = 0; i < a; i++) times.push(buf.readDoubleLE(at + 8 + i * 8));
      out.push({ times });
      at += 8 + a * 8;
      continue;
    }
    if (at + 16 > buf.length) return none();
    const b = buf.readDoubleLE(at + 8);
    out.push(rule.kind === 'bucket' ? { tokens: a, updatedMs: b } : { day: a, count: b });
    at += 16;
  }
  // A record of another rule set (a rule changed kind) is as good as none.
  return at === buf.length ? out : none();
}

function encode(states: LimitState[]): Buffer {
  let size = 0;
  for (const s of states) size += 'times' in s ? 8 + s.times.length * 8 : 16;
  const buf = Buffer.allocUnsafe(size);
  let at = 0;
  for (const s of states) {
    if ('times' in s) {
      buf.writeDoubleLE(s.times.length, at);
      for (let i = 0; i < s.times.length; i++) buf.writeDoubleLE(s.times[i], at + 8 + i * 8);
      at += 8 + s.times.length * 8;
    } else if ('tokens' in s) {
      buf.writeDoubleLE(s.tokens, at);
      buf.writeDoubleLE(s.updatedMs, at + 8);
      at += 16;
    } else {
      buf.writeDoubleLE(s.day, at);
      buf.writeDoubleLE(s.count, at + 8);
      at += 16;
    }
  }
  return buf;
}

/** The record key: the identity plus the rule names, so a changed rule set starts afresh. */
function recordKey(identity: string, rules: LimitRule[]): string {
  let k = identity;
  for (const r of rules) k += '|' + r.name;
  return k;
}

export class SharedLimiter {
  private readonly db: LmdbDb<Buffer, string>;

  constructor(hot: HotStore) {
    this.db = hot.db<Buffer, string>('rate_limits', { encoding: 'binary' });
  }

  /**
   * Checks `rules` for `identity` (e.g. `shorten:<key id>`) and, when every rule passes, consumes
   * one request from each. Throws if the store fails; callers decide to fail open or closed.
   */
  check(identity: string, rules: LimitRule[], nowMs = Date.now()): CompositeDecision {
    const db = this.db;
    const key = recordKey(identity, rules);
    return db.transactionSync(() => {
      const decision = evaluateRules(rules, decode(db.get(key), rules), nowMs);
      if (decision.allowed) db.putSync(key, encode(decision.next));
      return decision;
    });
  }

  /** The identity's binding limit as it stands, consuming nothing. */
  peek(identity: string, rules: LimitRule[], nowMs = Date.now()): LimitOutcome {
    return peekRules(rules, decode(this.db.get(recordKey(identity, rules)), rules), nowMs);
  }

  /** Gives back one request to every rule of `identity` (see refundRules), atomically. */
  refund(identity: string, rules: LimitRule[], nowMs = Date.now()): void {
    const db = this.db;
    const key = recordKey(identity, rules);
    db.transactionSync(() => {
      const states = decode(db.get(key), rules);
      // A record holds every rule or none (decode): with none, nothing was ever taken.
      if (states[0] === undefined) return;
      db.putSync(key, encode(refundRules(rules, states, nowMs) as LimitState[]));
    });
  }

  /**
   * Forgets the records of identities under `prefix` checked with `rules` that are at rest by
   * `nowMs` (atRest: as full as a missing record), so that keys made per client do not pile up.
   * Each is looked at again inside its removal's transaction, in case a check came meanwhile.
   * Returns how many were forgotten.
   */
  forgetAtRest(prefix: string, rules: LimitRule[], nowMs = Date.now()): number {
    const db = this.db;
    const suffix = recordKey('', rules);
    const stale: string[] = [];
    for (const { key, value } of db.getRange({ start: prefix })) {
      if (!key.startsWith(prefix)) break;
      if (key.endsWith(suffix) && atRest(rules, decode(value, rules), nowMs)) stale.push(key);
    }
    if (stale.length === 0) return 0;
    return db.transactionSync(() => {
      let forgotten = 0;
      for (const key of stale) {
        if (atRest(rules, decode(db.get(key), rules), nowMs) && db.removeSync(key)) forgotten++;
      }
      return forgotten;
    });
  }

  /** Forgets an identity's state for a rule set. */
  reset(identity: string, rules: LimitRule[]): void {
    this.db.removeSync(recordKey(identity, rules));
  }
}
