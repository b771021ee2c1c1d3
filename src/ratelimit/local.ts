// The loose limiter of redirects: per-thread, in memory, keyed by client IP. Redirect limits are
// loose by design, so the configured capacity and refill are split evenly across HTTP threads
// instead of paying for a shared write on the hottest path. Buckets that have refilled to full
// carry no information and are swept, so memory follows the number of recently active clients.
import { takeToken, type BucketSpec, type BucketState, type BucketDecision } from '../core/token-bucket';

export class LocalLimiter {
  private readonly buckets = new Map<string, BucketState>();
  readonly spec: BucketSpec;
  private readonly sweepTimer: NodeJS.Timeout;

  constructor(total: BucketSpec, threads: number, readonly name: string) {
    this.spec = {
      capacity: Math.max(1, Math.floor(total.capacity / threads)),
      refillPerSecond: total.refillPerSecond / threads,
    };
    const fullAfterMs = (this.spec.capacity / this.spec.refillPerSecond) * 1000;
    this.sweepTimer = setInterval(() => this.sweep(Date.now(), fullAfterMs), Math.max(1000, Math.min(60_000, fullAfterMs)));
    this.sweepTimer.unref();
  }

  take(client: string, nowMs: number): BucketDecision {
    const d = takeToken(this.buckets.get(client), this.spec, nowMs);
    if (d.allowed) this.buckets.set(client, d.next);
    return d;
  }

  get size(): number {
    return this.buckets.size;
  }

  private sweep(nowMs: number, fullAfterMs: number): void {
    for (const [k, s] of this.buckets) if (nowMs - s.updatedMs >= fullAfterMs) this.buckets.delete(k);
  }

  close(): void {
    clearInterval(this.sweepTimer);
    this.buckets.clear();
  }
}
