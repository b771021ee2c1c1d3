// The audit after the mixed traffic: what the client was answered, against what the server stored
// and delivered. Each check prints its figures; one that fails makes `perch bench` exit non-zero.
//   - every queue drained to zero within 30 s of the traffic's end: the click queue, each outbox
//     consumer's lag, the notification generation's, search indexing (the engine's queue and each
//     partition's lag) and the query-counting stream;
//   - every link created resolves: a 302 to its target (HEAD, so these count as bots);
//   - every post that got a 201 exists (GET /api/posts/{id});
//   - clicks recorded equal the 302s served, per link, people and bots apart (after the click drain);
//   - every notification owed was stored (and none that was not), and every one owed to a user
//     with an open socket reached that socket;
//   - no 5xx, as the client counted them and as the server counted them;
//   - every request got the answer it should have.
import { openSqlite } from '../src/store/sqlite';
import type { AuditCheck, BenchContext, PerchTarget } from './context';
import { call, metricValue, metricsOf, queuesDrained, waitUntil } from './http';
import { KINDS, MixedTraffic, notificationKey, type Ledger, type TrafficResult } from './mixed-traffic';

export const DRAIN_LIMIT_SECONDS = 30;
const CONCURRENT_CHECKS = 16;

/** Runs `check` over `items`, `CONCURRENT_CHECKS` at a time. */
async function eachBounded<T>(items: T[], check: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENT_CHECKS }, async () => {
    while (next < items.length) await check(items[next++]);
  }));
}

export interface Sockets {
  /** Recipient → notification keys received on their socket. */
  received: Map<string, Set<string>>;
  /** Users holding a socket all through the run. */
  holders: Set<string>;
  /** Sockets that closed before the end. */
  closed: number;
}

export async function auditMixed(ctx: BenchContext, target: PerchTarget, traffic: MixedTraffic, result: TrafficResult, ledger: Ledger, sockets: Sockets, trafficEnded: number): Promise<AuditCheck[]> {
  const checks: AuditCheck[] = [];
  const dataDir = target.server!.dataDir;

  // 1. Queues drain.
  let first: Record<string, number> | undefined;
  let last: Record<string, number> = {};
  const drained = await ctx.progress.step('queues drained', () =>
    queuesDrained(target.url, Math.max(0, DRAIN_LIMIT_SECONDS * 1000 - (performance.now() - trafficEnded)), (gauges) => {
      last = gauges;
      first ??= gauges;
    }),
  );
  const drainSeconds = (performance.now() - trafficEnded) / 1000;
  const status = JSON.parse((await target.server!.cli(['status', '--json'])).stdout) as {
    outbox: Record<string, unknown>;
    social: { posts: number };
    search: { indexed_posts: number };
  };
  const consumerLags: Record<string, number> = {};
  for (const [name, value] of Object.entries(status.outbox)) {
    if (value && typeof value === 'object' && 'lag_events' in value) consumerLags[name] = (value as { lag_events: number }).lag_events;
  }
  checks.push({
    check: `every queue drained to zero within ${DRAIN_LIMIT_SECONDS} s`,
    ok: drained && Object.values(consumerLags).every((v) => v === 0),
    figures: {
      drained_after_s: drained ? Number(drainSeconds.toFixed(1)) : `not within ${DRAIN_LIMIT_SECONDS}`,
      at_traffic_end: nonZero(first ?? {}),
      still_waiting: nonZero(last),
      outbox_consumer_lags: consumerLags,
    },
  });
  checks.push({
    check: 'the search index holds every post',
    ok: status.search.indexed_posts === status.social.posts,
    figures: { posts: status.social.posts, indexed_posts: status.search.indexed_posts },
  });

  // 2. Notifications owed to users with a socket reached it (the delivery consumer has drained; give the sockets a moment).
  const owedToSockets = (): number => {
    let missing = 0;
    for (const [recipient, keys] of ledger.owed) {
      if (!sockets.holders.has(recipient)) continue;
      const got = sockets.received.get(recipient);
      for (const k of keys) if (!got?.has(k)) missing++;
    }
    return missing;
  };
  await waitUntil(async () => owedToSockets() === 0, 5000, 100);

  // 3. Links created resolve (HEAD: booked as bot clicks like any other).
  let resolved = 0;
  const wrong: string[] = [];
  await ctx.progress.step(`${ledger.created.size} links created checked`, () =>
    eachBounded([...ledger.created], async ([code, url]) => {
      const r = await call(target.url, 'HEAD', '/' + code);
      if (r.status === 302) traffic.bookClick(code, true, r.headers.get('location') ?? undefined);
      if (r.status === 302 && r.headers.get('location') === url) resolved++;
      else if (wrong.length < 5) wrong.push(`${code}: ${r.status} ${r.headers.get('location') ?? ''}`);
    }),
  );
  checks.push({
    check: 'every link created resolves (302 to its target)',
    ok: resolved === ledger.created.size && ledger.wrongLocation === 0,
    figures: { created: ledger.created.size, resolved, wrong_target_during_run: ledger.wrongLocation, ...(wrong.length ? { first_failures: wrong } : {}) },
  });

  // 4. Posts answered 201 exist.
  let found = 0;
  const missingPosts: string[] = [];
  await ctx.progress.step(`${ledger.posts.size} posts created checked`, () =>
    eachBounded([...ledger.posts.keys()], async (id) => {
      const r = await call(target.url, 'GET', '/api/posts/' + id);
      if (r.status === 200 && r.json?.id === id) found++;
      else if (missingPosts.length < 5) missingPosts.push(`${id}: ${r.status}`);
    }),
  );
  checks.push({
    check: 'every post that got a 201 exists',
    ok: found === ledger.posts.size,
    figures: { answered_201: ledger.posts.size, found, ...(missingPosts.length ? { first_missing: missingPosts } : {}) },
  });

  // 5. Clicks: once every 302 served (the HEADs above included) is in the store's total, or the
  // drain's time is up, per link against the store.
  const db = openSqlite(dataDir, { readonly: true });
  try {
    let servedTotal = 0;
    for (const c of ledger.clicks.values()) servedTotal += c.people + c.bots;
    const totalEvents = db.prepare('SELECT events FROM link_click_totals WHERE id = 1');
    const clicksDrained = await ctx.progress.step('clicks drained into the store', () =>
      waitUntil(
        async () => metricValue(await metricsOf(target.url), 'perch_click_queue_depth') === 0 && (totalEvents.get() as { events: number }).events >= servedTotal,
        DRAIN_LIMIT_SECONDS * 1000,
        200,
      ),
    );
    const stored = new Map<string, { people: number; bots: number }>();
    for (const row of db.prepare('SELECT code, SUM(clicks) AS people, SUM(bots) AS bots FROM link_clicks_daily GROUP BY code').all() as Array<{ code: string; people: number; bots: number }>) {
      stored.set(row.code, { people: row.people, bots: row.bots });
    }
    let served = { people: 0, bots: 0 };
    let recorded = { people: 0, bots: 0 };
    let linksDiffering = 0;
    const differing: string[] = [];
    for (const code of new Set([...ledger.clicks.keys(), ...stored.keys()])) {
      const s = ledger.clicks.get(code) ?? { people: 0, bots: 0 };
      const r = stored.get(code) ?? { people: 0, bots: 0 };
      served = { people: served.people + s.people, bots: served.bots + s.bots };
      recorded = { people: recorded.people + r.people, bots: recorded.bots + r.bots };
      if (s.people !== r.people || s.bots !== r.bots) {
        linksDiffering++;
        if (differing.length < 5) differing.push(`${code}: served ${s.people}+${s.bots} bots, recorded ${r.people}+${r.bots} bots`);
      }
    }
    const events = (db.prepare('SELECT events FROM link_click_totals WHERE id = 1').get() as { events: number }).events;
    const server302 = metricValue(await metricsOf(target.url), 'perch_http_requests_total', 'status="302"');
    checks.push({
      check: 'clicks recorded equal the 302s served, per link, bots apart',
      ok: clicksDrained && linksDiffering === 0 && events === served.people + served.bots && server302 === served.people + served.bots,
      figures: {
        served_to_people: served.people,
        served_to_bots: served.bots,
        recorded_clicks: recorded.people,
        recorded_bots: recorded.bots,
        recorded_events: events,
        server_counted_302s: server302,
        links_clicked: ledger.clicks.size,
        links_differing: linksDiffering,
        ...(differing.length ? { first_differing: differing } : {}),
      },
    });

    // 6. Notifications: stored exactly as owed; delivered to open sockets.
    const stored2 = new Map<string, Set<string>>();
    for (const row of db
      .prepare('SELECT n.recipient_id AS recipient, n.type AS type, CAST(n.post_id AS TEXT) AS post, a.actor_id AS actor FROM notifications n JOIN notification_actors a ON a.notification_id = n.id')
      .all() as Array<{ recipient: string; type: string; post: string | null; actor: string }>) {
      let set = stored2.get(row.recipient);
      if (!set) stored2.set(row.recipient, (set = new Set()));
      set.add(notificationKey(row.type, row.post, row.actor));
    }
    let owed = 0;
    let notStored = 0;
    let owedToHolders = 0;
    const firstNotStored: string[] = [];
    for (const [recipient, keys] of ledger.owed) {
      for (const k of keys) {
        owed++;
        if (sockets.holders.has(recipient)) owedToHolders++;
        if (!stored2.get(recipient)?.has(k)) {
          notStored++;
          if (firstNotStored.length < 5) firstNotStored.push(`${recipient}: ${k}`);
        }
      }
    }
    let unowed = 0;
    for (const [recipient, keys] of stored2) for (const k of keys) if (!ledger.owed.get(recipient)?.has(k)) unowed++;
    const notDelivered = owedToSockets();
    checks.push({
      check: 'every notification owed was stored, and none that was not',
      // A like, follow or reply that got no answer may or may not have happened: that many unowed ones are explained.
      ok: notStored === 0 && unowed <= ledger.unanswered,
      figures: { owed, stored_not_owed: unowed, not_stored: notStored, writes_without_answer: ledger.unanswered, ...(firstNotStored.length ? { first_not_stored: firstNotStored } : {}) },
    });
    checks.push({
      check: 'every notification owed to an open socket was delivered to it',
      ok: notDelivered === 0 && sockets.closed === 0,
      figures: { sockets: sockets.holders.size, owed_to_open_sockets: owedToHolders, not_delivered: notDelivered, sockets_closed_early: sockets.closed },
    });
  } finally {
    db.close();
  }

  // 7. No 5xx: the client's count and the server's own.
  const metrics = await metricsOf(target.url);
  let server5xx = 0;
  for (const line of metrics.split('\n')) if (line.startsWith('perch_http_requests_total{') && /status="5\d\d"/.test(line)) server5xx += Number(line.slice(line.lastIndexOf(' ') + 1));
  let client5xx = 0;
  for (const kind of KINDS) for (const [status, n] of Object.entries(result.byKind[kind].statuses)) if (status.startsWith('5')) client5xx += n;
  checks.push({ check: 'no 5xx', ok: client5xx === 0 && server5xx === 0, figures: { client_counted: client5xx, server_counted: server5xx } });

  // 8. Every request got the answer it should have.
  const unexpected: Record<string, unknown> = {};
  let unexpectedTotal = 0;
  for (const kind of KINDS) {
    const n = MixedTraffic.unexpected(kind, result.byKind[kind]);
    if (n > 0) unexpected[kind] = { count: n, statuses: result.byKind[kind].statuses, no_answer: result.byKind[kind].no_answer };
    unexpectedTotal += n;
  }
  checks.push({ check: 'every request got the answer it should have', ok: unexpectedTotal === 0, figures: { requests: result.requests, unexpected: unexpectedTotal, ...unexpected } });
  return checks;
}

function nonZero(gauges: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(gauges).filter(([, v]) => v !== 0));
}
