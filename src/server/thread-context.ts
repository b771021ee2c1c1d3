// What one HTTP thread opens for its capabilities (capability.ts, ThreadContext): its own store
// handles, a leased node id, the writer's client, the limits, cursors and the publish/subscribe
// port.
import type { ThreadContext } from '../capability';
import type { Config } from '../config';
import { AccountStore } from '../accounts/store';
import { MeFields } from '../accounts/me-fields';
import { CursorCodec } from '../core/cursor';
import { clientPseudonym } from '../core/client-pseudonym';
import { TrustedProxies } from '../core/trusted-proxies';
import type { ThreadMetrics } from '../http/metrics';
import { ThreadPubSub } from '../pubsub/port';
import { RateLimits } from '../ratelimit/policies';
import { SharedLimiter } from '../ratelimit/shared';
import { PseudonymKeys } from '../ratelimit/pseudonym-key';
import { openHotStore, type HotStore } from '../store/lmdb';
import { leaseNodeId, type LeasedIdGenerator } from '../store/node-lease';
import { serverSecret } from '../store/secrets';
import { openSqlite } from '../store/sqlite';
import type { WriterClient } from '../writer/client';
import type { Signals } from './signals';

export interface OpenedThreadContext extends ThreadContext {
  lease: LeasedIdGenerator;
  /** Closes what open made (the writer's client included). */
  close(): Promise<void>;
}

/**
 * `writes` reaches the server's writer; closing the context closes it. `redirectTable` holds the
 * per-IP redirect buckets, shared by every HTTP thread (ratelimit/ip-buckets.ts). `sharedHot`: the
 * hot store of the thread this context runs on, when something else there opened it already (the
 * supervisor, for an HTTP server on the main thread); the context then uses it and leaves it open.
 */
export function openThreadContext(
  config: Config,
  dataDir: string,
  threadIndex: number,
  writes: WriterClient,
  redirectTable: SharedArrayBuffer,
  metrics: ThreadMetrics,
  signals: Signals,
  sharedHot?: HotStore,
): OpenedThreadContext {
  const sqlite = openSqlite(dataDir);
  const hot = sharedHot ?? openHotStore(dataDir);
  const lease = leaseNodeId(hot);
  const limits = new RateLimits(config, new SharedLimiter(hot), { rejected: metrics.rateLimitRejected }, redirectTable);
  const pubsub = new ThreadPubSub(config.server.threads - 1);
  const pseudonymKeys = new PseudonymKeys(hot);
  return {
    config,
    dataDir,
    sqlite,
    hot,
    lease,
    newId: () => lease.ids.next(),
    nodeId: lease.nodeId,
    writes,
    cursors: new CursorCodec(serverSecret(sqlite, 'cursor')),
    limits,
    accounts: new AccountStore(sqlite),
    me: new MeFields(),
    pubsub,
    signals,
    metrics,
    trustedProxies: new TrustedProxies(config.server.trusted_proxies),
    pseudonym: (address) => clientPseudonym(pseudonymKeys.current(), address),
    threadIndex,
    async close() {
      writes.close();
      pubsub.close();
      limits.redirect.close();
      lease.release();
      sqlite.close();
      if (!sharedHot) await hot.close();
    },
  };
}
