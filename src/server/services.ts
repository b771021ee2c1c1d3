// Everything one HTTP thread (or one CLI command) works with: stores, id generator, capabilities.
import type { Config } from '../config';
import { AccountStore } from '../accounts/store';
import { openSqlite, type Sqlite } from '../store/sqlite';
import { openHotStore, type HotStore } from '../store/lmdb';
import { leaseNodeId, type LeasedIdGenerator } from '../store/node-lease';
import { RateLimits, type RateLimitHooks } from '../ratelimit/policies';
import { SharedLimiter } from '../ratelimit/shared';
import { openSocial, type Social } from '../social';
import { LinkService } from '../links/service';
import type { WriterClient } from '../social/group-commit';
import { CursorCodec } from '../core/cursor';
import { serverSecret } from '../store/secrets';

export interface Services {
  config: Config;
  dataDir: string;
  sqlite: Sqlite;
  hot: HotStore;
  lease: LeasedIdGenerator;
  newId: () => string;
  accounts: AccountStore;
  limits: RateLimits;
  social: Social;
  links: LinkService;
  /** Client addresses whose X-Forwarded-For is believed (server.trusted_proxies). */
  trustedProxies: ReadonlySet<string>;
  close(): Promise<void>;
}

export interface ServiceHooks extends RateLimitHooks {}

const NO_HOOKS: ServiceHooks = { rejected: () => {} };

/**
 * `writes` reaches the server's writer; closing the services closes it. `redirectTable` holds the
 * per-IP redirect buckets, shared by every HTTP thread (ratelimit/ip-buckets.ts).
 */
export function openServices(config: Config, dataDir: string, writes: WriterClient, redirectTable: SharedArrayBuffer, hooks: ServiceHooks = NO_HOOKS): Services {
  const sqlite = openSqlite(dataDir);
  const hot = openHotStore(dataDir);
  const lease = leaseNodeId(hot);
  const accounts = new AccountStore(sqlite);
  const limits = new RateLimits(config, new SharedLimiter(hot), hooks, redirectTable);
  const cursors = new CursorCodec(serverSecret(sqlite, 'cursor'));
  const links = new LinkService({ config, sqlite, hot, limits, newId: () => lease.ids.next(), nodeId: lease.nodeId, writes, cursors });
  return {
    config,
    dataDir,
    sqlite,
    hot,
    lease,
    newId: () => lease.ids.next(),
    accounts,
    limits,
    social: openSocial(config, dataDir, sqlite, hot, accounts, () => lease.ids.next(), writes, cursors),
    links,
    trustedProxies: new Set(config.server.trusted_proxies),
    async close() {
      writes.close();
      limits.redirect.close();
      links.close();
      lease.release();
      sqlite.close();
      await hot.close();
    },
  };
}
