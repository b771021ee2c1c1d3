// The short-link capability: creation (pool codes or aliases, one or in bulk, optionally behind a
// password), the redirect (the appliance's hot path), details with click analytics, QR images,
// the export, edits and deletion, plus its background work: keeping the code pool full,
// draining the click queue, the anomaly detector and the expiry sweep.
import type { Capability } from '../capability';
import { log } from '../log';
import { UPKEEP_LANE } from '../server/upkeep-lane';
import { detectorHorizon, openFlagMirror, rebuildFlagMirror } from './anomaly';
import { clickQueueState, openClickQueue } from './clicks';
import { CodePool } from './code-pool';
import { MIGRATIONS } from './migrations';
import { redirectRoutes } from './redirect';
import { LINK_PASSWORD_GUESSES, PASSWORD_GUESSES, linkPasswordGuessRules, passwordGuessRules } from '../ratelimit/policies';
import { SharedLimiter } from '../ratelimit/shared';
import { LinkStore } from './store';
import { LINK_TASKS, prunableMinute } from './tasks';
import { linkWrites, type LinkWrites } from './writes';

// Its service and routes are loaded by the HTTP threads alone, when they make them: the writer
// thread takes this module's operations and jobs and serves no route, and the request schemas
// bring zod.
const serviceModule = () => require('./service') as typeof import('./service');
const routesModule = () => require('./routes') as typeof import('./routes');

export const links: Capability = {
  name: 'links',
  migrations: MIGRATIONS,
  writes: linkWrites,
  tasks: LINK_TASKS,

  // Fill the pool to its target before the server listens (a first start fills 10,000 codes);
  // afterwards a job tops it up below the low-water mark.
  async prepare(ctx) {
    const pool = new CodePool(ctx.hot);
    const length = ctx.config.links.code_length;
    const discarded = pool.discardOtherLengths(length);
    if (discarded > 0) log.info('links.code_length changed: pooled codes of another length discarded', { discarded, code_length: length });
    const size = pool.size();
    const target = ctx.config.links.pool_target;
    if (size >= target) return;
    // Said before the wait, so a slow first start (a large target) explains itself in the log.
    log.info('filling the code pool before listening', { size, target });
    await ctx.runTask(LINK_TASKS, 'links.refillPool', { below: target });
  },

  jobs(ctx) {
    const pool = new CodePool(ctx.hot);
    const queue = openClickQueue(ctx.hot);
    const store = new LinkStore(ctx.sqlite);
    const guesses = new SharedLimiter(ctx.hot);
    /** The detector's last pass: the start of its window and the creations in it from then on. */
    let lastPass: { afterMs: number; creations: number } | undefined;
    // The drain, the detector and the sweep are only handed to the pool when they have something to do: a
    // task every second at rest would keep pool threads alive (and their heaps resident) for
    // nothing (docs/memory.md). Both checks are cheap reads of the supervisor's own handles. The
    // three share the upkeep lane (with the media upkeep): they run in the background pool beside
    // search indexing, and none of them is urgent enough to queue there beside the others.
    return [
      {
        name: 'links.refillPool',
        everyMs: 500,
        async run(c) {
          if (pool.size() < c.config.links.pool_low_water) await c.runTask(LINK_TASKS, 'links.refillPool');
        },
      },
      {
        name: 'links.drainClicks',
        lane: UPKEEP_LANE,
        everyMs: 2000,
        flushOnStop: true,
        async run(c) {
          // A batch a stop interrupted keeps its entries in the queue until it is finished.
          if (clickQueueState(queue).depth > 0) await c.runTask(LINK_TASKS, 'links.drainClicks');
        },
      },
      {
        name: 'links.detectAnomalies',
        lane: UPKEEP_LANE,
        everyMs: 1000,
        async run(c) {
          const now = Date.now();
          // Without a creation since the last pass its verdicts cannot change: every threshold
          // counts creations in a window that only loses them as time passes.
          if (lastPass && store.countCreations(lastPass.afterMs) === lastPass.creations) return;
          const afterMs = detectorHorizon(c.config, now);
          // Counted before the pass: a link committed during it, or stamped later than now, makes
          // the next count differ and the next tick pass again.
          const creations = store.countCreations(afterMs, now);
          if (creations === 0) return;
          await c.runTask(LINK_TASKS, 'links.detectAnomalies');
          lastPass = { afterMs, creations };
        },
      },
      {
        // Wrong-password records are keyed per client: forgotten once they are full again, so
        // they do not pile up (and a pseudonym is kept no longer than the limit needs it). The
        // records per code (all clients together) go the same way, for every code ever guessed at.
        name: 'links.forgetPasswordGuesses',
        everyMs: 60_000,
        async run(c) {
          guesses.forgetAtRest(PASSWORD_GUESSES, passwordGuessRules(c.config));
          guesses.forgetAtRest(LINK_PASSWORD_GUESSES, linkPasswordGuessRules(c.config));
        },
      },
      {
        name: 'links.sweepExpired',
        lane: UPKEEP_LANE,
        everyMs: 30_000,
        async run(c) {
          const now = Date.now();
          if (store.sweepDue(now, prunableMinute(now))) await c.runTask(LINK_TASKS, 'links.sweepExpired');
        },
      },
    ];
  },

  gauges(figures, ctx) {
    const pool = new CodePool(ctx.hot);
    const queue = openClickQueue(ctx.hot);
    const flags = openFlagMirror(ctx.hot);
    figures.gauge('perch_code_pool_size', 'Pre-generated short codes available for new links.', () => pool.size());
    figures.gauge(
      'perch_click_queue_depth',
      'Click queue entries (up to about 1,800 bytes or 20 ms of clicks each) waiting to be aggregated.',
      () => clickQueueState(queue).depth,
    );
    figures.gauge(
      'perch_click_queue_lag_seconds',
      'Age of the oldest click event waiting to be aggregated (0 when the queue is empty).',
      () => clickQueueState(queue).lagSeconds,
    );
    figures.gauge('perch_flagged_accounts', 'Accounts currently throttled by the anomaly detector.', () => {
      const now = Date.now();
      let n = 0;
      for (const { value } of flags.getRange()) if (value > now) n++;
      return n;
    });
  },

  http(ctx) {
    const { LinkService } = serviceModule();
    const service = new LinkService({
      config: ctx.config,
      sqlite: ctx.sqlite,
      hot: ctx.hot,
      limits: ctx.limits,
      accounts: ctx.accounts,
      newId: ctx.newId,
      nodeId: ctx.nodeId,
      writes: ctx.writes.as<LinkWrites>(),
      pubsub: ctx.pubsub,
      rejected: ctx.metrics.rateLimitRejected,
      pseudonym: ctx.pseudonym,
    });
    return {
      routes: routesModule().linkRoutes(service, { limits: ctx.limits, cursors: ctx.cursors, trustedProxies: ctx.trustedProxies }),
      rawRoutes: redirectRoutes({
        cache: service.cache,
        clicks: service.clicks,
        limiter: ctx.limits.redirect,
        trustedProxies: ctx.trustedProxies,
        observe: ctx.metrics.observe,
        rejected: ctx.metrics.rateLimitRejected,
      }),
      close: () => service.close(),
    };
  },

  // The anomaly flags' mirror is the one piece of hot state that nothing else refills.
  rebuildHot: (sqlite, hot) => rebuildFlagMirror(new LinkStore(sqlite), openFlagMirror(hot)),

  status({ sqlite, hot }) {
    const queue = clickQueueState(openClickQueue(hot));
    return {
      links: new LinkStore(sqlite).countLinks(),
      code_pool_size: new CodePool(hot).size(),
      click_queue: { depth: queue.depth, lag_seconds: queue.lagSeconds },
    };
  },
};
