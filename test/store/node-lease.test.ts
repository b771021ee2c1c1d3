// Node-id leases of the id generator (store/node-lease.ts): distinct node ids for live holders, a
// released or expired lease free for the next, which starts above the ids minted before, and the
// renewal a holder that works synchronously for long asks for as it goes.
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openHotStore } from '../../src/store/lmdb';
import { LEASE_TTL_MS, RENEW_EVERY_MS, leaseNodeId } from '../../src/store/node-lease';

function hotStore(t: Test) {
  const dir = mkdtempSync(join(tmpdir(), 'perch-node-lease-'));
  const hot = openHotStore(dir);
  t.teardown(async () => {
    await hot.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return hot;
}

t.test('live holders get distinct node ids; a released one is taken next, above its ids', async (t) => {
  const hot = hotStore(t);
  const a = leaseNodeId(hot);
  const b = leaseNodeId(hot);
  t.not(a.nodeId, b.nodeId);
  const minted = a.ids.next();
  a.release();
  const c = leaseNodeId(hot);
  t.equal(c.nodeId, a.nodeId, 'the released node id is the lowest free one');
  t.ok(BigInt(c.ids.next()) > BigInt(minted), 'its next holder mints above what was minted under it');
  b.release();
  c.release();
});

t.test('renewIfDue renews once the last renewal is old enough, and a lease left to expire is free', async (t) => {
  const hot = hotStore(t);
  let clock = 1_800_000_000_000;
  const now = () => clock;
  const lease = leaseNodeId(hot, now);
  t.equal(hot.leases.get(lease.nodeId)?.expiresAt, clock + LEASE_TTL_MS);
  clock += RENEW_EVERY_MS - 1;
  lease.renewIfDue();
  t.equal(hot.leases.get(lease.nodeId)?.expiresAt, 1_800_000_000_000 + LEASE_TTL_MS, 'not yet due: unchanged');
  clock += 1;
  lease.renewIfDue();
  t.equal(hot.leases.get(lease.nodeId)?.expiresAt, clock + LEASE_TTL_MS, 'due: renewed from now');
  // Renewed as it goes, a holder keeps its node id however long it works.
  for (let i = 0; i < 10; i++) {
    clock += RENEW_EVERY_MS;
    lease.renewIfDue();
  }
  const other = leaseNodeId(hot, now);
  t.not(other.nodeId, lease.nodeId, 'a holder that renewed keeps its node id');
  other.release();
  // Not renewed past its lifetime, the lease is free although its process lives.
  clock += LEASE_TTL_MS + 1;
  const next = leaseNodeId(hot, now);
  t.equal(next.nodeId, lease.nodeId, 'an expired lease is free');
  next.release();
  lease.release();
});

t.test('a holder whose lease ran out and was taken is stopped at its next renewIfDue', async (t) => {
  const hot = hotStore(t);
  let clock = 1_800_000_000_000;
  const now = () => clock;
  const slow = leaseNodeId(hot, now);
  // One step of its work took longer than the lease lasts, and another process (a live one: pid 1)
  // took the node id meanwhile, as leaseNodeId there would have.
  clock += LEASE_TTL_MS + 1;
  const taken = { pid: 1, threadId: 0, expiresAt: clock + LEASE_TTL_MS, lastMs: clock };
  hot.leases.putSync(slow.nodeId, taken);
  t.throws(() => slow.renewIfDue(), /leased to another minter/, 'it stops rather than mint the same ids');
  t.same(hot.leases.get(slow.nodeId), taken, "the other's lease is untouched");
});
