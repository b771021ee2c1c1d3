// Servers running on a data directory, for `perch status`: each `perch serve` records itself in
// LMDB once it listens (pid, version, start time, where it listens) and removes the record when it
// stops. A record whose process is gone (a server killed with SIGKILL) counts for nothing and is
// dropped by the next server that starts.
import { processAlive } from './node-lease';
import type { HotStore, LmdbDb } from './lmdb';

export const SERVERS_DB = 'servers';

export interface ServerRecord {
  pid: number;
  version: string;
  /** ISO 8601. */
  startedAt: string;
  host: string;
  port: number;
  publicOrigin: string;
  threads: number;
}

function serversDb(hot: HotStore): LmdbDb<ServerRecord, number> {
  return hot.db<ServerRecord, number>(SERVERS_DB);
}

/** Records this process as a server on the data directory (and forgets servers that are gone). */
export function registerServer(hot: HotStore, record: ServerRecord): void {
  const db = serversDb(hot);
  db.transactionSync(() => {
    for (const { key } of db.getRange()) if (!processAlive(key)) db.removeSync(key);
    db.putSync(record.pid, record);
  });
}

export function unregisterServer(hot: HotStore, pid = process.pid): void {
  serversDb(hot).removeSync(pid);
}

/** The servers whose process is alive, oldest first. */
export function liveServers(hot: HotStore): ServerRecord[] {
  const out: ServerRecord[] = [];
  for (const { key, value } of serversDb(hot).getRange()) if (processAlive(key)) out.push(value);
  return out.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
}
