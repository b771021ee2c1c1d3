// perch keygen / keys list / keys revoke.
import { hashApiKey, newApiKey, newKeyId } from '../core/api-key';
import { isValidHandle } from '../core/handle';
import { AccountStore } from '../accounts/store';
import { announceKeyRevocation } from '../accounts/key-cache';
import { openSqlite } from '../store/sqlite';
import { migrateAll } from '../capabilities';
import { leaseNodeId } from '../store/node-lease';
import { UsageError, commandConfig, dataDirOf, existingDataDirOf, commandHotStore, printJson, userNamed, type CommonOptions } from './common';

interface KeygenOptions extends CommonOptions {
  user: string;
  admin: boolean;
  json: boolean;
}

/** `create`: the command may make the data directory (keygen is how a new installation starts). */
function openAccounts(opts: CommonOptions, create = false) {
  commandConfig(opts);
  const db = openSqlite(create ? dataDirOf(opts) : existingDataDirOf(opts));
  migrateAll(db);
  return { db, accounts: new AccountStore(db) };
}

export async function keygenCommand(opts: KeygenOptions): Promise<void> {
  if (!isValidHandle(opts.user)) {
    throw new UsageError(`invalid handle "${opts.user}": use 1-30 of A-Z a-z 0-9 _`);
  }
  const { db, accounts } = openAccounts(opts, true);
  const hot = commandHotStore(dataDirOf(opts));
  const lease = leaseNodeId(hot);
  try {
    const now = new Date().toISOString();
    const { user, created } = accounts.ensureUser(opts.user, () => lease.ids.next(), now);
    const key = newApiKey();
    const keyId = newKeyId();
    accounts.addKey(keyId, user.id, hashApiKey(key), opts.admin, now);
    if (opts.json) {
      // The contract's four fields; `perch keys list --user <handle> --json` shows the key's id.
      printJson({ user_id: user.id, handle: user.handle, key, admin: opts.admin });
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
  const { db, accounts } = openAccounts(opts);
  try {
    let handle: string | undefined;
    if (opts.user !== undefined) {
      const u = userNamed(accounts, opts.user);
      if (!u) throw new Error(`no user ${opts.user}`);
      handle = u.handle;
    }
    const rows = accounts.listKeys(handle);
    if (opts.json) {
      printJson(rows.map((r) => ({ key_id: r.id, user_id: r.user_id, handle: r.handle, admin: r.admin, created_at: r.created_at, revoked_at: r.revoked_at })));
      return;
    }
    if (rows.length === 0) {
      process.stdout.write('no keys\n');
      return;
    }
    for (const r of rows) {
      const state = r.revoked_at ? `revoked ${r.revoked_at}` : 'active';
      process.stdout.write(`${r.id}  @${r.handle}${r.admin ? '  admin' : ''}  created ${r.created_at}  ${state}\n`);
    }
  } finally {
    db.close();
  }
}

export async function keysRevokeCommand(keyId: string, opts: CommonOptions): Promise<void> {
  const { db, accounts } = openAccounts(opts);
  try {
    if (!accounts.revokeKey(keyId, new Date().toISOString())) {
      throw new Error(`no active key with id ${keyId}`);
    }
    // Servers cache authenticated keys; this makes every one of them forget its cache now.
    const hot = commandHotStore(dataDirOf(opts));
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
