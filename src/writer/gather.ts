// When many clients write at once, but each only now and then (people posting, each on their
// own), their writes reach the writer spread out: each finds no sync running and would be
// committed, synced and answered alone. A commit and a sync cost about the same for one write as
// for ten (the transaction rewrites the same table and index pages in the log, the sync is one
// fdatasync, the answers go out in one turn), so a steady stream of lone writes costs the machine
// several times what the same writes cost in groups, and that CPU is taken from the reads beside
// them. A group that is small while many writes are in flight therefore waits a few
// milliseconds for the writes that are about to come, then commits as one.
//
// A client that writes one at a time, waiting for each answer, must never wait for others that
// are not coming: it never has more than one write in flight, so the writer gathers only when
// several were in flight at once lately, and a group closes as soon as it holds as many writes as
// were in flight (clients that take turns) or `target` writes. Nor does it gather when writes come
// so fast that `target` of them arrive during a sync: groups then form by themselves while the log
// syncs, and a wait would only lengthen every write of a load that keeps the log busy.

export interface GatherPolicy {
  /** The longest a write waits, from its arrival, for others to join its group. */
  windowMs: number;
  /** A group this large commits at once. */
  target: number;
  /** Gathering starts once this many requested writes were in flight at once. */
  minInFlight: number;
  /** How long an observed number of writes in flight is remembered: one to two of these. */
  memoryMs: number;
}

export const GATHER_POLICY: GatherPolicy = { windowMs: 5, target: 8, minInFlight: 3, memoryMs: 100 };

/**
 * The writer's record of how many requested writes were in flight (sent and not yet answered) at
 * once lately, and the waiting rule that follows from it. Pure: the caller passes the time.
 */
export class Gathering {
  private spanStart = -Infinity;
  /** The most in flight at once in the current span, and in the span before it. */
  private current = 0;
  private previous = 0;
  /** Requested writes that arrived in the current span, and in the span before it. */
  private arrivals = 0;
  private previousArrivals = 0;

  constructor(private readonly policy: GatherPolicy = GATHER_POLICY) {}

  /** A requested write arrived at `now`; `inFlight` requested writes, itself included, are unanswered. */
  arrived(now: number, inFlight: number): void {
    const since = now - this.spanStart;
    if (since >= this.policy.memoryMs) {
      // A span that ended just now is kept as the previous one; an older one is forgotten.
      const kept = since < 2 * this.policy.memoryMs;
      this.previous = kept ? this.current : 0;
      this.previousArrivals = kept ? this.arrivals : 0;
      this.current = 0;
      this.arrivals = 0;
      this.spanStart = now;
    }
    if (inFlight > this.current) this.current = inFlight;
    this.arrivals++;
  }

  /** Requested writes a millisecond lately: over the current span and the one before it, if kept. */
  ratePerMs(now: number): number {
    const since = now - this.spanStart;
    if (since >= 2 * this.policy.memoryMs) return 0;
    if (since >= this.policy.memoryMs) return this.arrivals / since;
    return (this.arrivals + this.previousArrivals) / (since + this.policy.memoryMs);
  }

  /** The most requested writes in flight at once over the last one to two spans. */
  concurrency(now: number): number {
    const since = now - this.spanStart;
    if (since >= 2 * this.policy.memoryMs) return 0;
    if (since >= this.policy.memoryMs) return this.current;
    return Math.max(this.current, this.previous);
  }

  /**
   * How many more milliseconds a group of `size` requested writes, the first of which arrived at
   * `firstAt`, waits before its commit, when a sync takes `syncMs` lately: 0 to commit now.
   */
  waitMs(now: number, size: number, firstAt: number, syncMs: number): number {
    if (size === 0) return 0;
    const inFlight = this.concurrency(now);
    if (inFlight < this.policy.minInFlight || size >= Math.min(this.policy.target, inFlight)) return 0;
    if (this.ratePerMs(now) * syncMs >= this.policy.target) return 0;
    return Math.max(0, this.policy.windowMs - (now - firstAt));
  }
}
