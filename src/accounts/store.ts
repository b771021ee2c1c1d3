// Users and API keys in SQLite.
import type { Sqlite } from '../store/sqlite';
import { handleKey } from '../core/handle';

export interface User {
  id: string;
  handle: string;
  created_at: string;
  followers_count: number;
  following_count: number;
}

export interface ApiKeyRow {
  id: string;
  user_id: string;
  handle: string;
  admin: boolean;
  created_at: string;
  revoked_at: string | null;
}

/** The identity behind an authenticated request. */
export interface Principal {
  userId: string;
  keyId: string;
  admin: boolean;
}

const USER_COLUMNS = 'id, handle, created_at, followers_count, following_count';

export class AccountStore {
  private readonly byId;
  private readonly byHandle;
  private readonly insertUser;
  private readonly insertKey;
  private readonly principalByHash;
  private readonly keyRows;
  private readonly keyRowsOfUser;
  private readonly revoke;
  private readonly keyState;
  private readonly countUsers;
  private readonly countKeys;

  constructor(private readonly db: Sqlite) {
    this.byId = db.prepare(`SELECT ${USER_COLUMNS} FROM users WHERE id = ?`);
    this.byHandle = db.prepare(`SELECT ${USER_COLUMNS} FROM users WHERE handle_lower = ?`);
    this.insertUser = db.prepare('INSERT INTO users (id, handle, handle_lower, created_at) VALUES (?, ?, ?, ?)');
    this.insertKey = db.prepare('INSERT INTO api_keys (id, user_id, key_hash, admin, created_at) VALUES (?, ?, ?, ?, ?)');
    this.principalByHash = db.prepare('SELECT id, user_id, admin FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL');
    const keySelect = 'SELECT k.id, k.user_id, u.handle, k.admin, k.created_at, k.revoked_at FROM api_keys k JOIN users u ON u.id = k.user_id';
    this.keyRows = db.prepare(`${keySelect} ORDER BY k.created_at, k.id`);
    this.keyRowsOfUser = db.prepare(`${keySelect} WHERE u.handle_lower = ? ORDER BY k.created_at, k.id`);
    this.revoke = db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');
    this.keyState = db.prepare('SELECT user_id, revoked_at FROM api_keys WHERE id = ?');
    this.countUsers = db.prepare('SELECT COUNT(*) FROM users').pluck();
    this.countKeys = db.prepare('SELECT COUNT(*) FROM api_keys').pluck();
  }

  /** Users and API keys (revoked ones included), for `perch status`. */
  counts(): { users: number; api_keys: number } {
    return { users: this.countUsers.get() as number, api_keys: this.countKeys.get() as number };
  }

  userById(id: string): User | undefined {
    return this.byId.get(id) as User | undefined;
  }

  userByHandle(handle: string): User | undefined {
    return this.byHandle.get(handleKey(handle)) as User | undefined;
  }

  /** Resolves a path reference: a user id, or `@handle`. */
  userByRef(ref: string): User | undefined {
    return ref.startsWith('@') ? this.userByHandle(ref.slice(1)) : this.userById(ref);
  }

  /** Returns the user with this handle, creating it when new; `created` says which. */
  ensureUser(handle: string, newId: () => string, now: string): { user: User; created: boolean } {
    return this.db.transaction(() => {
      const existing = this.userByHandle(handle);
      if (existing) return { user: existing, created: false };
      const id = newId();
      this.insertUser.run(id, handle, handleKey(handle), now);
      return { user: this.userById(id)!, created: true };
    }).immediate();
  }

  addKey(keyId: string, userId: string, keyHash: string, admin: boolean, now: string): void {
    this.insertKey.run(keyId, userId, keyHash, admin ? 1 : 0, now);
  }

  principalForKeyHash(keyHash: string): Principal | undefined {
    const row = this.principalByHash.get(keyHash) as { id: string; user_id: string; admin: number } | undefined;
    return row && { keyId: row.id, userId: row.user_id, admin: row.admin === 1 };
  }

  listKeys(handle?: string): ApiKeyRow[] {
    const rows = (handle ? this.keyRowsOfUser.all(handleKey(handle)) : this.keyRows.all()) as Array<Omit<ApiKeyRow, 'admin'> & { admin: number }>;
    return rows.map((r) => ({ ...r, admin: r.admin === 1 }));
  }

  /** Whether a key exists and is not revoked, as this connection's transaction sees it. */
  keyIsLive(keyId: string): boolean {
    const row = this.keyState.get(keyId) as KeyState | undefined;
    return row !== undefined && row.revoked_at === null;
  }

  /**
   * Revokes a key: 'revoked' now, or the time it was revoked before ('already'), or 'unknown'
   * when no key has this id. A key revoked before keeps its first revocation time. Both known
   * states name the key's user.
   */
  revokeKey(
    keyId: string,
    now: string,
  ): { state: 'revoked'; userId: string } | { state: 'already'; revokedAt: string; userId: string } | { state: 'unknown' } {
    return this.db.transaction(() => {
      const row = this.keyState.get(keyId) as KeyState | undefined;
      if (!row) return { state: 'unknown' as const };
      if (row.revoked_at !== null) return { state: 'already' as const, revokedAt: row.revoked_at, userId: row.user_id };
      this.revoke.run(now, keyId);
      return { state: 'revoked' as const, userId: row.user_id };
    }).immediate();
  }
}

interface KeyState {
  user_id: string;
  revoked_at: string | null;
}

export function publicUser(u: User): User {
  return { id: u.id, handle: u.handle, created_at: u.created_at, followers_count: u.followers_count, following_count: u.following_count };
}
