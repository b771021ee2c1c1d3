// Background work of the short-link capability, run by the supervisor: keeping the code pool
// full, draining the click queue, the anomaly detector and the expiry sweep, plus their gauges.
import { Gauge, type Registry } from 'prom-client';
import type { BackgroundContext, BackgroundModule } from '../server/background';
import { clickQueueState, openClickQueue } from './clicks';
import { CodePool } from './code-pool';
import { openFlagMirror } from './anomaly';
import { log } from '../log';

export const linksBackground: BackgroundModule = {
  // Fill the pool to its target before the server listens (a first start fills 10,000 codes);
  // afterwards a job tops it up below the low-water mark.
  async prepare(ctx: BackgroundContext) {
    const pool = new CodePool(ctx.hot);
    const length = ctx.config.links.code_length;
    const discarded = pool.discardOtherLengths(length);
    if (discarded > 0) log.info('links.code_length changed: pooled codes of another length discarded', { discarded, code_length: length });
    const size = pool.size();
    const target = ctx.config.links.pool_target;
    if (size >= target) return;
    // Said before the wait, so a slow first start (a large target) explains itself in the log.
    log.info('filling the code pool before listening', { size, target });
    await ctx.runTask({ task: 'links.refillPool', payload: { below: target } });
  },
  jobs(ctx: BackgroundContext) {
    const pool = new CodePool(ctx.hot);
    return [
      {
        name: 'links.refillPool',
        everyMs: 500,
        async run(c) {
          if (pool.size() < c.config.links.pool_low_water) await c.runTask({ task: 'links.refillPool' });
        },
      },
      { name: 'links.drainClicks', everyMs: 2000, flushOnStop: true, run: (c) => c.runTask({ task: 'links.drainClicks' }).then(() => undefined) },
      { name: 'links.detectAnomalies', everyMs: 1000, run: (c) => c.runTask({ task: 'links.detectAnomalies' }).then(() => undefined) },
      { name: 'links.sweepExpired', everyMs: 30_000, run: (c) => c.runTask({ task: 'links.sweepExpired' }).then(() => undefined) },
    ];
  },
  gauges(registry: Registry, ctx: BackgroundContext) {
    const pool = new CodePool(ctx.hot);
    const queue = openClickQueue(ctx.hot);
    const flags = openFlagMirror(ctx.hot);
    new Gauge({
      name: 'perch_code_pool_size',
      help: 'Pre-generated short codes available for new links.',
      registers: [registry],
      collect() {
        this.set(pool.size());
      },
    });
    new Gauge({
      name: 'perch_click_queue_depth',
      help: 'Click batches (one per event-loop turn of an HTTP thread) waiting to be aggregated.',
      registers: [registry],
      collect() {
        this.set(clickQueueState(queue).depth);
      },
    });
    new Gauge({
      name: 'perch_click_queue_lag_seconds',
      help: 'Age of the oldest click event waiting to be aggregated (0 when the queue is empty).',
      registers: [registry],
      collect() {
        this.set(clickQueueState(queue).lagSeconds);
      },
    });
    new Gauge({
      name: 'perch_flagged_accounts',
      help: 'Accounts currently throttled by the anomaly detector.',
      registers: [registry],
      collect() {
        const now = Date.now();
        let n = 0;
        for (const { value } of flags.getRange()) if (value > now) n++;
        this.set(n);
      },
    });
  },
};
