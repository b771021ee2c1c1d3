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
import { UsageError, announceDataDir, commandConfig, commandHotStore, commandLease, dataDirOf, dataDirPath, existingDataDirOf, printJson, userNamed, type CommonOptions } from './common';

interface KeygenOptions extends CommonOptions {
  user: string;
  admin: boolean;
  json: boolean;
}

/** `create`: the command may make the data directory (keygen is how a new installation starts). */
function openAccounts(opts: CommonOptions, create = false) {
  commandConfig(opts);
  const created = create && !existsSync(sqlitePath(dataDirPath(opts)));
  const dir = create ? dataDirOf(opts) : existingDataDirOf(opts);
  const db = openSqlite(dir);
  migrateAll(db);
  return { db, dir, created, accounts: new AccountStore(db) };
}

export async function keygenCommand(opts: KeygenOptions): Promise<void> {
  if (!isValidHandle(opts.user)) {
    throw new UsageError(`invalid handle "${opts.user}": use 1-30 of A-Z a-z 0-9 _`);
  }
  const { db, dir, created: newStore, accounts } = openAccounts(opts, true);
  const hot = commandHotStore(dir);
  const lease = await commandLease(hot);
  try {
    const now = new Date().toISOString();
    const { user, created } = accounts.ensureUser(opts.user, () => lease.ids.next(), now);
    const key = newApiKey();
    const keyId = newKeyId();
    accounts.addKey(keyId, user.id, hashApiKey(key), opts.admin, now);
    // Where the key now works: a server on another data directory answers it with 401.
    announceDataDir(dir, { json: opts.json, created: newStore });
    if (opts.json) {
      // The contract's five fields; key_id is what `perch keys revoke` takes.
      printJson({ user_id: user.id, handle: user.handle, key, key_id: keyId, admin: opts.admin });
    } else {
      process.stdout.write(`${created ? 'created user' : 'user'} @${user.handle} (id ${user.id})\n`);
      process.stdout.write(`key id ${keyId}${opts.admin ? ' (admin)' : ''}\n`);
      process.stdout.write(`${key}\n`);
      process.stdout.write('This key is shown once; perch stores only its hash.\n');
    }
  } finally {
    lease.release();
    db.close();
    await hot.close();
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
    if (outcome.state === 'already') {
      // Revoking is idempotent: what was asked for holds. The servers forgot the key when it was
      // revoked (or within a second, if that was not through this command): nothing to announce.
      process.stdout.write(`${keyId} was already revoked (${outcome.revokedAt})\n`);
      return;
    }
    // Servers cache authenticated keys; this makes every one of them forget its cache now.
    const hot = commandHotStore(dir);
    try {
      announceKeyRevocation(hot);
    } finally {
      await hot.close();
    }
    process.stdout.write(`revoked ${keyId}\n`);
  } finally {
    db.close();
  }
}
