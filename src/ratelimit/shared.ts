// The strict limiter: bucket state in LMDB, read-refill-decrement-write inside one LMDB write
// transaction, so every HTTP thread and every process on the data dir sees one bucket and two
// concurrent requests can never both take the last token.
import { evaluateRules, peekRules, type CompositeDecision, type LimitOutcome, type LimitRule, type LimitState } from '../core/token-bucket';
import type { HotStore, LmdbDb } from '../store/lmdb';

export class SharedLimiter {
  private readonly db: LmdbDb<LimitState, string>;

  constructor(hot: HotStore) {
    this.db = hot.db<LimitState, string>('rate_limits');
  }

  /**
   * Checks `rules` for `identity` (e.g. `shorten:<key id>`) and, when every rule passes, consumes
   * one request from each. Throws if the store fails; callers decide to fail open or closed.
   */
  check(identity: string, rules: LimitRule[], nowMs = Date.now()): CompositeDecision {
    const db = this.db;
    return db.transactionSync(() => {
      const keys = rules.map((r) => identity + '|' + r.name);
      const states = keys.map((k) => db.get(k));
      const decision = evaluateRules(rules, states, nowMs);
      if (decision.allowed) for (let i = 0; i < keys.length; i++) db.putSync(keys[i], decision.next[i]);
      return decision;
    });
  }

  /** The identity's binding limit as it stands, consuming nothing. */
  peek(identity: string, rules: LimitRule[], nowMs = Date.now()): LimitOutcome {
    return peekRules(rules, rules.map((r) => this.db.get(identity + '|' + r.name)), nowMs);
  }

  /** Forgets an identity's state (tests and `perch flags clear` use it). */
  reset(identity: string, rules: LimitRule[]): void {
    this.db.transactionSync(() => {
      for (const r of rules) this.db.removeSync(identity + '|' + r.name);
    });
  }
}
