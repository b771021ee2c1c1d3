// perch keygen / keys list / keys revoke.
import { hashApiKey, newApiKey, newKeyId } from '../core/api-key';
import { isValidHandle } from '../core/handle';
import { AccountStore } from '../accounts/store';
import { NotificationStore } from '../notifications/store';
import { announceKeyRevocation } from '../accounts/key-cache';
import { openSqlite } from '../store/sqlite';
import { migrateAll } from '../capabilities';
import { existsSync } from 'node:fs';
import { alignColumns } from './format';
import { sqlitePath } from '../store/sqlite';
import { announceDataDir, commandConfig, commandHotStore, commandLease, dataDirOf, dataDirPath, existingDataDirOf, userNamed, type CommonOptions } from './common';
import { UsageError, printJson } from './usage';

interface KeygenOptions extends CommonOptions {
  user: string;
  admin: boolean;
  json: boolean;
}

function openAccounts(opts: CommonOptions) {
  commandConfig(opts);
  const dir = existingDataDirOf(opts);
  const db = openSqlite(dir);
  migrateAll(db);
  return { db, dir, accounts: new AccountStore(db) };
}

/** What `perch keygen --json` prints: the contract's five fields. */
export interface CreatedKey {
  user_id: string;
  handle: string;
  key: string;
  key_id: string;
  admin: boolean;
}

/**
 * Creates an API key for the user `handle` in the data directory `dir`, and the user first when
 * there is none: `perch keygen` without its flags, config and printing. The key is returned once;
 * only its hash is stored.
 */
export async function createKey(dir: string, handle: string, admin: boolean): Promise<CreatedKey & { userCreated: boolean }> {
  if (!isValidHandle(handle)) {
    throw new UsageError(`invalid handle "${handle}": use 1-30 of A-Z a-z 0-9 _`);
  }
  const db = openSqlite(dir);
  try {
    migrateAll(db);
    const accounts = new AccountStore(db);
    const hot = commandHotStore(dir);
    const lease = await commandLease(hot);
    try {
      const now = new Date().toISOString();
      const { user, created } = accounts.ensureUser(handle, () => lease.ids.next(), now);
      const key = newApiKey();
      const keyId = newKeyId();
      accounts.addKey(keyId, user.id, hashApiKey(key), admin, now);
      return { user_id: user.id, handle: user.handle, key, key_id: keyId, admin, userCreated: created };
    } finally {
      // The hot store is closed even when the release fails (a full disk): a process that ends
      // with it open leaves a reader slot behind (docs/architecture.md).
      try {
        lease.release();
      } finally {
        await hot.close();
      }
    }
  } finally {
    db.close();
  }
}

export async function keygenCommand(opts: KeygenOptions): Promise<void> {
  // Checked before the data directory is made, so that a mistyped handle leaves nothing behind.
  if (!isValidHandle(opts.user)) {
    throw new UsageError(`invalid handle "${opts.user}": use 1-30 of A-Z a-z 0-9 _`);
  }
  // keygen is how a new installation starts: it may make the data directory.
  commandConfig(opts);
  const newStore = !existsSync(sqlitePath(dataDirPath(opts)));
  const dir = dataDirOf(opts);
  const { userCreated, ...created } = await createKey(dir, opts.user, opts.admin);
  // Where the key now works: a server on another data directory answers it with 401.
  announceDataDir(dir, { json: opts.json, created: newStore });
  if (opts.json) {
    printJson(created);
  } else {
    process.stdout.write(`${userCreated ? 'created user' : 'user'} @${created.handle} (id ${created.user_id})\n`);
    process.stdout.write(`key id ${created.key_id}${opts.admin ? ' (admin)' : ''}\n`);
    process.stdout.write(`${created.key}\n`);
    process.stdout.write('This key is shown once; perch stores only its hash.\n');
  }
}

interface ListOptions extends CommonOptions {
  user?: string;
  json: boolean;
}

export function keysListCommand(opts: ListOptions): void {
  const { db, dir, accounts } = openAccounts(opts);
  try {
    let handle: string | undefined;
    if (opts.user !== undefined) {
      const u = userNamed(accounts, opts.user);
      if (!u) throw new UsageError(`no user ${opts.user}`);
      handle = u.handle;
    }
    const rows = accounts.listKeys(handle);
    announceDataDir(dir, { json: opts.json });
    if (opts.json) {
      printJson(rows.map((r) => ({ key_id: r.id, user_id: r.user_id, handle: r.handle, admin: r.admin, created_at: r.created_at, revoked_at: r.revoked_at })));
      return;
    }
    if (rows.length === 0) {
      process.stdout.write('no keys\n');
      return;
    }
    const table = [['KEY ID', 'USER', 'ADMIN', 'CREATED', 'STATE']];
    for (const r of rows) table.push([r.id, `@${r.handle}`, r.admin ? 'yes' : 'no', r.created_at, r.revoked_at ? `revoked ${r.revoked_at}` : 'active']);
    for (const line of alignColumns(table)) process.stdout.write(line + '\n');
  } finally {
    db.close();
  }
}

export async function keysRevokeCommand(keyId: string, opts: CommonOptions): Promise<void> {
  const { db, dir, accounts } = openAccounts(opts);
  try {
    const outcome = accounts.revokeKey(keyId, new Date().toISOString());
    if (outcome.state === 'unknown') throw new UsageError(`no key with id ${keyId}`);
    // A revoked key is often a lost device: the push subscriptions registered with it go too, so
    // the device stops receiving notifications, and so do the user's subscriptions of unknown key
    // (from before keys were recorded), which the user's browsers register again at their next
    // visit. Done again for a key revoked already (a run that stopped here).
    new NotificationStore(db).deleteKeySubscriptions(keyId, outcome.userId);
    announceDataDir(dir);
    // Servers cache authenticated keys and keep the sockets opened with them; this makes every one
    // of them forget its cache and close those sockets now. Announced for a key revoked already
    // too: a run that stopped between its revocation and this point announced nothing, and the
    // servers would go on until the cache's second and the sockets' next check.
    const hot = commandHotStore(dir);
    try {
      announceKeyRevocation(hot);
    } finally {
      await hot.close();
    }
    // Revoking is idempotent: what was asked for holds.
    process.stdout.write(outcome.state === 'already' ? `${keyId} was already revoked (${outcome.revokedAt})\n` : `revoked ${keyId}\n`);
  } finally {
    db.close();
  }
}
