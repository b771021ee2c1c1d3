// perch status: what the stores hold and how far background work lags, read straight from the
// data directory (works whether or not the server is running).
import { migrate, openSqlite, currentSchemaVersion } from '../store/sqlite';
import { liveLeases } from '../store/node-lease';
import { CodePool } from '../links/code-pool';
import { clickQueueState, openClickQueue } from '../links/clicks';
import { socialStatus } from '../social/outbox';
import { commandConfig, commandHotStore, existingDataDirOf, printJson, type CommonOptions } from './common';

interface StatusOptions extends CommonOptions {
  json: boolean;
}

export async function statusCommand(opts: StatusOptions): Promise<void> {
  commandConfig(opts);
  const dir = existingDataDirOf(opts);
  const db = openSqlite(dir);
  migrate(db);
  const hot = commandHotStore(dir);
  try {
    const count = (table: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    const { depth, lagSeconds } = clickQueueState(openClickQueue(hot));
    const queue = { depth, lag_seconds: lagSeconds };
    const status = {
      data_dir: dir,
      schema_version: currentSchemaVersion(db),
      counts: { users: count('users'), api_keys: count('api_keys'), links: count('links') },
      code_pool_size: new CodePool(hot).size(),
      click_queue: queue,
      social: socialStatus(db),
      node_leases: liveLeases(hot).map((l) => ({ node_id: l.nodeId, pid: l.pid, thread: l.threadId, expires_at: new Date(l.expiresAt).toISOString() })),
    };
    if (opts.json) {
      printJson(status);
      return;
    }
    process.stdout.write(`data dir        ${status.data_dir}\n`);
    process.stdout.write(`schema version  ${status.schema_version}\n`);
    for (const [k, v] of Object.entries(status.counts)) process.stdout.write(`${k.padEnd(16)}${v}\n`);
    process.stdout.write(`code pool       ${status.code_pool_size}\n`);
    process.stdout.write(`click queue     ${status.click_queue.depth} batches, lag ${status.click_queue.lag_seconds.toFixed(1)} s\n`);
    for (const [k, v] of Object.entries(status.social)) process.stdout.write(`${k.padEnd(20)}${v}\n`);
    process.stdout.write(`node leases     ${status.node_leases.map((l) => `${l.node_id} (pid ${l.pid})`).join(', ') || 'none'}\n`);
  } finally {
    db.close();
    await hot.close();
  }
}
