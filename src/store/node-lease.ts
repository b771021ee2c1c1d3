// Node ids for the id generator are leased in LMDB so that no two live minters on one data dir
// (threads of one server, a second server, a CLI command) ever share one. A lease names its
// holder (pid, thread) and expires unless renewed; a lease whose process is gone is free at once.
// The lease also remembers the last millisecond its holder minted in, so a successor starts
// above it even if the wall clock has stepped back in between.
import { threadId } from 'node:worker_threads';
import { IdGenerator, MAX_NODE_ID } from '../core/snowflake';
import { errorFields, log } from '../log';
import type { HotStore, NodeLease } from './lmdb';

export const LEASE_TTL_MS = 60_000;
export const RENEW_EVERY_MS = 15_000;

/** Whether a process with this pid exists (one of another user counts). */
export function processAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function isFree(lease: NodeLease | undefined, now: number): boolean {
  return !lease || lease.expiresAt < now || !processAlive(lease.pid);
}

export interface LeasedIdGenerator {
  ids: IdGenerator;
  nodeId: number;
  /**
   * Renews the lease when the last renewal is `RENEW_EVERY_MS` old. A timer does so for a holder
   * whose event loop turns; a holder that works synchronously for longer than the lease lasts (a
   * large `perch import`) calls this as it goes, else its lease expires, another minter takes the
   * node id, and both mint the same ids. Throws when that has happened already (a step between two
   * calls took longer than the lease lasts): the holder must stop minting.
   */
  renewIfDue(): void;
  release(): void;
}

export function leaseNodeId(hot: HotStore, now: () => number = Date.now): LeasedIdGenerator {
  const { leases } = hot;
  const acquired = leases.transactionSync(() => {
    const t = now();
    for (let n = 0; n <= MAX_NODE_ID; n++) {
      const lease = leases.get(n);
      if (isFree(lease, t)) {
        const lastMs = lease?.lastMs ?? 0;
        leases.putSync(n, { pid: process.pid, threadId, expiresAt: t + LEASE_TTL_MS, lastMs });
        return { nodeId: n, lastMs };
      }
    }
    return null;
  });
  if (!acquired) throw new Error('no free node id: 1024 live id minters on this data dir');
  const ids = new IdGenerator(acquired.nodeId, now, acquired.lastMs);
  const nodeId = acquired.nodeId;

  let renewedAt = now();
  /** Renews the lease; answers false when it is no longer this holder's (it expired and was taken). */
  const renew = (): boolean => {
    renewedAt = now();
    try {
      return leases.transactionSync(() => {
        const lease = leases.get(nodeId);
        if (!lease || lease.pid !== process.pid || lease.threadId !== threadId) return false;
        leases.putSync(nodeId, { ...lease, expiresAt: now() + LEASE_TTL_MS, lastMs: ids.lastTimestampMs });
        return true;
      });
    } catch (err) {
      // A full disk, say: the lease still holds for a while, and the next renewal tries again.
      log.error('node lease renewal failed', { node_id: nodeId, ...errorFields(err) });
      return true;
    }
  };
  const timer = setInterval(renew, RENEW_EVERY_MS);
  timer.unref();

  return {
    ids,
    nodeId,
    renewIfDue() {
      if (now() - renewedAt >= RENEW_EVERY_MS && !renew()) {
        throw new Error(`node id ${nodeId} was leased to another minter after this one's lease ran out: stopped before minting ids it may mint too`);
      }
    },
    release() {
      clearInterval(timer);
      leases.transactionSync(() => {
        const lease = leases.get(nodeId);
        if (lease && lease.pid === process.pid && lease.threadId === threadId) {
          // Keep lastMs so that the next holder starts above every id minted here.
          leases.putSync(nodeId, { ...lease, expiresAt: 0, lastMs: ids.lastTimestampMs });
        }
      });
    },
  };
}

/** Live leases, for `perch status`. */
export function liveLeases(hot: HotStore, now = Date.now()): Array<{ nodeId: number } & NodeLease> {
  const out: Array<{ nodeId: number } & NodeLease> = [];
  for (const { key, value } of hot.leases.getRange()) {
    if (!isFree(value, now)) out.push({ nodeId: key, ...value });
  }
  return out;
}
