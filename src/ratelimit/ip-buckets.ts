// The loose limiter of redirects: per client IP, in memory shared by every HTTP thread of the
// process, so that a client gets the configured bucket whichever thread its connection lands on,
// without a store write on the hottest path.
//
// The buckets live in a fixed table in a SharedArrayBuffer that the supervisor makes and hands to
// each thread: slot i holds a 52-bit hash of the IP (0 when free), the tokens left and the time of
// the last take, guarded by a spin lock of its own (held for a few arithmetic operations). An IP's
// slot is found by probing a few slots from its hash. A bucket that has refilled to full carries
// no information, so its slot is free for another IP; when every probed slot holds a live bucket
// (more clients than the table holds within one refill period), the one closest to full is
// replaced, and its client starts again from a full bucket. Memory is fixed:
// REDIRECT_TABLE_SLOTS × 28 bytes.
import { takeToken, type BucketSpec, type BucketDecision, type BucketState } from '../core/token-bucket';

/** Slots of the table: clients that can be limited at once within one refill period. */
export const REDIRECT_TABLE_SLOTS = 1 << 16;
/** Slots looked at per take, from the IP's hash onwards. */
const PROBES = 8;
/** Doubles per slot: key, tokens, updatedMs. */
const FIELDS = 3;

export class IpBuckets {
  readonly spec: BucketSpec;
  private readonly slots: Float64Array;
  private readonly locks: Int32Array;
  private readonly mask: number;
  /** A bucket untouched for this long is full again. */
  private readonly fullAfterMs: number;

  /** The shared memory of a table of `slots` slots (a power of two), for every thread to open. */
  static allocate(slots = REDIRECT_TABLE_SLOTS): SharedArrayBuffer {
    if (!Number.isInteger(Math.log2(slots))) throw new Error('the slot count must be a power of two');
    return new SharedArrayBuffer(slots * (FIELDS * 8 + 4));
  }

  constructor(spec: BucketSpec, table: SharedArrayBuffer, readonly name: string) {
    this.spec = { capacity: Math.max(1, spec.capacity), refillPerSecond: spec.refillPerSecond };
    const count = table.byteLength / (FIELDS * 8 + 4);
    this.slots = new Float64Array(table, 0, count * FIELDS);
    this.locks = new Int32Array(table, count * FIELDS * 8, count);
    this.mask = count - 1;
    this.fullAfterMs = (this.spec.capacity / this.spec.refillPerSecond) * 1000;
  }

  take(client: string, nowMs: number): BucketDecision {
    const key = ipKey(client);
    const start = key % (this.mask + 1);
    const s = this.slots;
    // The IP's own slot, if it has one.
    for (let p = 0; p < PROBES; p++) {
      const i = (start + p) & this.mask;
      if (s[i * FIELDS] !== key) continue;
      this.lock(i);
      // Taken over by another IP meanwhile: then this one has no slot any more.
      if (s[i * FIELDS] === key) {
        const d = takeToken({ tokens: s[i * FIELDS + 1], updatedMs: s[i * FIELDS + 2] }, this.spec, nowMs);
        if (d.allowed) this.store(i, key, d.next);
        this.unlock(i);
        return d;
      }
      this.unlock(i);
      break;
    }
    // A new bucket, in a free slot, one whose bucket is full again, or the probed one closest to full.
    const d = takeToken(undefined, this.spec, nowMs);
    let victim = start;
    let oldest = Infinity;
    for (let p = 0; p < PROBES; p++) {
      const i = (start + p) & this.mask;
      const updated = s[i * FIELDS + 2];
      if (s[i * FIELDS] === 0 || nowMs - updated >= this.fullAfterMs) {
        victim = i;
        break;
      }
      if (updated < oldest) {
        oldest = updated;
        victim = i;
      }
    }
    this.lock(victim);
    this.store(victim, key, d.next);
    this.unlock(victim);
    return d;
  }

  /** Slots holding a bucket that is not full yet: the clients currently limited. */
  get size(): number {
    const now = Date.now();
    let n = 0;
    for (let i = 0; i <= this.mask; i++) if (this.slots[i * FIELDS] !== 0 && now - this.slots[i * FIELDS + 2] < this.fullAfterMs) n++;
    return n;
  }

  /** Nothing to release: the table lives as long as any thread holds it. */
  close(): void {}

  private store(i: number, key: number, next: BucketState): void {
    this.slots[i * FIELDS] = key;
    this.slots[i * FIELDS + 1] = next.tokens;
    this.slots[i * FIELDS + 2] = next.updatedMs;
  }

  private lock(i: number): void {
    // Held by another thread for a few operations at most: spin.
    while (Atomics.compareExchange(this.locks, i, 0, 1) !== 0);
  }

  private unlock(i: number): void {
    Atomics.store(this.locks, i, 0);
  }
}

/**
 * A 52-bit hash of an IP address (two FNV-1a passes), never 0: exact in a double, and two clients
 * sharing one would share a bucket, which at 2^-52 per pair does not happen.
 */
export function ipKey(ip: string): number {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ ip.length;
  for (let i = 0; i < ip.length; i++) {
    const c = ip.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  return ((a >>> 0) + (b & 0xfffff) * 0x100000000) || 1;
}
