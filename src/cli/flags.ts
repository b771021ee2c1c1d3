// perch flags list / perch flags clear <user>: the accounts the anomaly detector throttled.
import { AccountStore } from '../accounts/store';
import { clearFlag, isActive, openFlagMirror } from '../links/anomaly';
import { LinkStore } from '../links/store';
import { openSqlite } from '../store/sqlite';
import { migrateAll } from '../capabilities';
import { announceDataDir, commandConfig, commandHotStore, existingDataDirOf, userNamed, type CommonOptions } from './common';
import { UsageError, printJson } from './usage';
import { alignColumns } from './format';

interface ListOptions extends CommonOptions {
  json: boolean;
  all: boolean;
}

function open(opts: CommonOptions) {
  commandConfig(opts);
  const dir = existingDataDirOf(opts);
  const db = openSqlite(dir);
  migrateAll(db);
  const hot = commandHotStore(dir);
  return { db, hot, dir, store: new LinkStore(db), accounts: new AccountStore(db) };
}

export async function flagsListCommand(opts: ListOptions): Promise<void> {
  const { db, hot, dir, store } = open(opts);
  try {
    announceDataDir(dir, { json: opts.json });
    const now = Date.now();
    const rows = store
      .flags()
      .filter((f) => opts.all || isActive(f, now))
      .map((f) => ({
        user_id: f.user_id,
        handle: f.handle,
        reason: f.reason,
        flagged_at: f.flagged_at,
        until: new Date(f.until_ms).toISOString(),
        active: isActive(f, now),
        cleared_at: f.cleared_at,
      }));
    if (opts.json) {
      printJson(rows);
      return;
    }
    if (rows.length === 0) {
      process.stdout.write('no flagged accounts\n');
      return;
    }
    const table = [['USER', 'USER ID', 'FLAGGED', 'STATE', 'REASON']];
    for (const r of rows) {
      const state = r.active ? `until ${r.until}` : r.cleared_at ? `cleared ${r.cleared_at}` : `ended ${r.until}`;
      table.push([`@${r.handle ?? '?'}`, r.user_id, r.flagged_at, state, r.reason]);
    }
    for (const line of alignColumns(table)) process.stdout.write(line + '\n');
  } finally {
    db.close();
    await hot.close();
  }
}

export async function flagsClearCommand(user: string, opts: CommonOptions): Promise<void> {
  const { db, hot, dir, store, accounts } = open(opts);
  try {
    const u = userNamed(accounts, user);
    if (!u) throw new UsageError(`no user ${user}`);
    announceDataDir(dir);
    const wasActive = clearFlag(store, openFlagMirror(hot), u.id);
    process.stdout.write(wasActive ? `cleared the flag of @${u.handle}\n` : `@${u.handle} was not flagged\n`);
  } finally {
    db.close();
    await hot.close();
  }
}
