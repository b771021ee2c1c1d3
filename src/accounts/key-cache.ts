// A per-thread cache of authenticated API keys, so that a request does not cost a SQLite lookup.
// Keyed by the key's hash (never the key itself). Revocation takes effect:
//   - at once for `perch keys revoke`, which bumps a counter in LMDB that every lookup compares
//     with the one its thread last saw (a changed counter empties the cache), read once per
//     event-loop turn;
//   - within `ttlMs` (one second) for any other change of api_keys, because an entry is trusted
//     only that long before SQLite is asked again.
// Unknown or revoked keys are never cached: every such request asks SQLite.
import type { HotStore, LmdbDb } from '../store/lmdb';
import type { Principal } from './store';

export const KEY_CACHE_TTL_MS = 1000;
const KEYS_DB = 'api_key_state';
const VERSION = 'revocations';
const MAX_ENTRIES = 10_000;

function keysDb(hot: HotStore): LmdbDb<number, string> {
  return hot.db<number, string>(KEYS_DB);
}

/** Tells every thread and process on the data dir that a key was revoked. */
export function announceKeyRevocation(hot: HotStore): void {
  const db = keysDb(hot);
  db.transactionSync(() => {
    db.putSync(VERSION, (db.get(VERSION) ?? 0) + 1);
  });
}

/**
 * The revocation counter, read at most once per event-loop turn. lmdb-js reads from a snapshot it
 * renews once per turn anyway, so a second read in the same turn could not see a newer value; a
 * request that arrives after a revocation is committed is read in a later turn, and refused.
 */
export function revocationVersion(hot: HotStore): () => number {
  const db = keysDb(hot);
  let version = -1;
  const forget = () => {
    version = -1;
  };
  return () => {
    if (version < 0) {
      version = db.get(VERSION) ?? 0;
      setImmediate(forget);
    }
    return version;
  };
}

interface Entry {
  principal: Principal;
  until: number;
}

export class PrincipalCache {
  private readonly entries = new Map<string, Entry>();
  private seenVersion = -1;

  constructor(
    private readonly lookup: (keyHash: string) => Principal | undefined,
    private readonly version: () => number,
    private readonly ttlMs = KEY_CACHE_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  get(keyHash: string): Principal | undefined {
    const v = this.version();
    if (v !== this.seenVersion) {
      this.entries.clear();
      this.seenVersion = v;
    }
    const t = this.now();
    const hit = this.entries.get(keyHash);
    if (hit && hit.until > t) return hit.principal;
    const principal = this.lookup(keyHash);
    if (!principal) {
      if (hit) this.entries.delete(keyHash);
      return undefined;
    }
    if (!hit && this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(keyHash, { principal, until: t + this.ttlMs });
    return principal;
  }
}
