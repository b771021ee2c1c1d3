// Everything one HTTP thread (or one CLI command) works with: stores, id generator, capabilities.
import type { Config } from '../config';
import { AccountStore } from '../accounts/store';
import { openSqlite, type Sqlite } from '../store/sqlite';
import { openHotStore, type HotStore } from '../store/lmdb';
import { leaseNodeId, type LeasedIdGenerator } from '../store/node-lease';

export interface Services {
  config: Config;
  dataDir: string;
  sqlite: Sqlite;
  hot: HotStore;
  lease: LeasedIdGenerator;
  newId: () => string;
  accounts: AccountStore;
  close(): Promise<void>;
}

export function openServices(config: Config, dataDir: string): Services {
  const sqlite = openSqlite(dataDir);
  const hot = openHotStore(dataDir);
  const lease = leaseNodeId(hot);
  const accounts = new AccountStore(sqlite);
  return {
    config,
    dataDir,
    sqlite,
    hot,
    lease,
    newId: () => lease.ids.next(),
    accounts,
    async close() {
      lease.release();
      sqlite.close();
      await hot.close();
    },
  };
}
