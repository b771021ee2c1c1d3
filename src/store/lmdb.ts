// Hot state that can be rebuilt from SQLite lives in one LMDB environment under the data dir,
// shared by every thread and process on the box; its write transactions are atomic across them.
// Writes are not fsynced (noSync): they survive a crash of the process, and everything here is
// either rebuildable or, like rate-limit buckets, harmless to lose on a power cut.
import { open, type Database as LmdbDatabase, type RootDatabase } from 'lmdb';
import { join } from 'node:path';

export type LmdbDb<V = unknown, K extends import('lmdb').Key = import('lmdb').Key> = LmdbDatabase<V, K>;

export interface HotStore {
  root: RootDatabase;
  /** Node-id leases of the id generator, keyed by node id. */
  leases: LmdbDb<NodeLease, number>;
  /** Named databases opened on demand by the capabilities that own them. */
  db<V = unknown, K extends import('lmdb').Key = import('lmdb').Key>(name: string, options?: { encoding?: 'msgpack' | 'binary' }): LmdbDb<V, K>;
  close(): Promise<void>;
}

export interface NodeLease {
  pid: number;
  threadId: number;
  expiresAt: number;
  lastMs: number;
}

export function lmdbPath(dataDir: string): string {
  return join(dataDir, 'lmdb');
}

export function openHotStore(dataDir: string): HotStore {
  const root = open({ path: lmdbPath(dataDir), maxDbs: 64, noSync: true, compression: false });
  const cache = new Map<string, LmdbDb<any, any>>();
  function db<V, K extends import('lmdb').Key>(name: string, options: { encoding?: 'msgpack' | 'binary' } = {}): LmdbDb<V, K> {
    let d = cache.get(name);
    if (!d) {
      d = root.openDB({ name, compression: false, encoding: options.encoding ?? 'msgpack' });
      cache.set(name, d);
    }
    return d as LmdbDb<V, K>;
  }
  return {
    root,
    leases: db<NodeLease, number>('node_leases'),
    db,
    close: () => root.close(),
  };
}

/** Whether the hot store is open and answers a read (readiness, GET /readyz). */
export function hotStoreOpen(hot: HotStore): boolean {
  try {
    hot.leases.get(0);
    return (hot.root as unknown as { status?: string }).status === 'open';
  } catch {
    return false;
  }
}
