// perch status: what the stores hold and how far background work lags, read straight from the
// data directory (works whether or not the server is running). Each capability reports its own
// section (capability.ts, status).
import { openSqlite } from '../store/sqlite';
import { currentSchemaVersion } from '../store/migration';
import { liveLeases } from '../store/node-lease';
import { CAPABILITIES, migrateAll } from '../capabilities';
import type { StatusSection } from '../capability';
import { commandConfig, commandHotStore, existingDataDirOf, printJson, type CommonOptions } from './common';

interface StatusOptions extends CommonOptions {
  json: boolean;
}

export async function statusCommand(opts: StatusOptions): Promise<void> {
  const config = commandConfig(opts);
  const dir = existingDataDirOf(opts);
  const db = openSqlite(dir);
  migrateAll(db);
  const hot = commandHotStore(dir);
  try {
    const sections: Record<string, StatusSection> = {};
    for (const c of CAPABILITIES) if (c.status) sections[c.name] = c.status({ config, dataDir: dir, sqlite: db, hot });
    const status = {
      data_dir: dir,
      schema_version: currentSchemaVersion(db),
      ...sections,
      node_leases: liveLeases(hot).map((l) => ({ node_id: l.nodeId, pid: l.pid, thread: l.threadId, expires_at: new Date(l.expiresAt).toISOString() })),
    };
    if (opts.json) {
      printJson(status);
      return;
    }
    const line = (label: string, value: unknown) => process.stdout.write(`${label.padEnd(28)}${String(value)}\n`);
    line('data dir', status.data_dir);
    line('schema version', status.schema_version);
    for (const [name, section] of Object.entries(sections)) {
      for (const [key, value] of Object.entries(section)) {
        if (value !== null && typeof value === 'object') {
          line(`${name} ${key}`, Object.entries(value).map(([k, v]) => `${k} ${v}`).join(', '));
        } else {
          line(`${name} ${key}`, value);
        }
      }
    }
    line('node leases', status.node_leases.map((l) => `${l.node_id} (pid ${l.pid})`).join(', ') || 'none');
  } finally {
    db.close();
    await hot.close();
  }
}
