// notify-ws: real-time notification delivery with many sockets open. 10,000 users hold a WebSocket
// each on /ws; then a storm of likes (5 distinct likers per post, shuffled) hits one post of each of
// 1,000 of them (after a warm-up of a tenth of them, reported apart). Each sample is the time from the like's 204 (as this client receives it) until
// the recipient's socket receives a notification that names the liker; the goal is p99 < 100 ms.
// Memory per open socket is the server process's RSS after the sockets opened minus before, over
// the sockets. The sockets of users who receive nothing are held by a second process (`hold`), so
// that the process that times deliveries is not slowed by them; its own event-loop stalls are
// reported too (client_loop_delay_*), since they delay what it sees as much as the server would.
// Concurrency: 32 likes at a time (--connections).
// Bounded: the storm is a fixed number of likes (recipients × likes-per-recipient) and the run gives
// up after 120 s; everything listens on 127.0.0.1.
import { fork, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import WebSocket from 'ws';
import { openSqlite } from '../src/store/sqlite';
import { migrateAll } from '../src/capabilities';
import { residentOf } from '../src/server/thread-memory';
import { atMost, type BenchContext, type ScenarioResult } from './context';
import { percentile } from './median';
import { metricValue, metricsOf } from './http';
import { seedOnePostEach, seedUsers, type Seeded } from './seed';

const LIKES_PER_RECIPIENT = 5;
const DEADLINE_MS = 120_000;
/** Sockets opening at once. */
const OPENING = 200;

function rssBytes(pid: number | undefined): number {
  return pid === undefined ? NaN : (residentOf(pid)?.total ?? NaN);
}

const round = (x: number, digits = 1) => Number(x.toFixed(digits));

interface Sample {
  acked?: number;
  received?: number;
}

export async function runNotifyWs(ctx: BenchContext): Promise<ScenarioResult> {
  if (ctx.remote) ctx.skip('needs 10,000 users with keys, which only the data directory can seed');
  const sockets = ctx.size(10_000, 120);
  const recipients = ctx.size(1000, 20);
  const likesPerRecipient = LIKES_PER_RECIPIENT;
  const concurrency = ctx.connections(32);
  const dataDir = ctx.tempDir('perch-bench-notify-');
  const { users, targets, posts } = await ctx.progress.step(`seeded ${sockets.toLocaleString('en-US')} users, a post for each of ${recipients.toLocaleString('en-US')}`, () => {
    const db = openSqlite(dataDir);
    migrateAll(db);
    const users: Seeded[] = seedUsers(db, 'u', sockets, true);
    const targets = users.slice(0, recipients);
    const posts = seedOnePostEach(db, targets.map((u) => u.userId));
    db.close();
    return { users, targets, posts };
  });

  const server = await ctx.startPerch(dataDir);
  const clients: WebSocket[] = [];
  let holder: ChildProcess | undefined;
  try {
    const pid = server.pid;
    // A moment for start-up work (code pool, JIT) to settle before the first reading.
    await new Promise((r) => setTimeout(r, 1000));
    const rssBefore = rssBytes(pid);

    // samples[recipient index] maps liker id → its sample.
    const samples = targets.map(() => new Map<string, Sample>());
    const wsUrl = server.url.replace('http:', 'ws:') + '/ws';
    const openStarted = performance.now();
    // The sockets of users who receive nothing are held by a second process, so that this one,
    // which times the deliveries, carries only the recipients' sockets and the like load.
    holder = ctx.adopt(fork(__filename, ['hold'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
    const held = new Promise<number>((resolve, reject) => {
      holder!.once('message', (m: { open: number }) => resolve(m.open));
      holder!.once('exit', (code) => reject(new Error(`the socket holder exited with ${code}`)));
    });
    holder.send({ url: wsUrl, keys: users.slice(recipients).map((u) => u.key) });
    for (let from = 0; from < targets.length; from += OPENING) {
      await Promise.all(
        targets.slice(from, from + OPENING).map(async (u, k) => {
          const index = from + k;
          const ws = await openSocket(`${wsUrl}?access_token=${u.key}`);
          clients.push(ws);
          ws.on('message', (data) => {
            const now = performance.now();
            const msg = JSON.parse(data.toString()) as { data: { actor_ids: string[] } };
            for (const actor of msg.data.actor_ids) {
              const s = samples[index].get(actor);
              if (s && s.received === undefined) s.received = now;
            }
          });
        }),
      );
    }
    const heldOpen = await ctx.progress.step(`${sockets.toLocaleString('en-US')} sockets open`, () => held);
    const openSeconds = (performance.now() - openStarted) / 1000;
    await new Promise((r) => setTimeout(r, 2000));
    const rssAfter = rssBytes(pid);
    const openOnServer = metricValue(await metricsOf(server.url), 'perch_ws_open_sockets');
    const memory = ctx.watchMemory(server);

    // The storm: each recipient's post liked by `likesPerRecipient` distinct users, shuffled.
    const likers = users.slice(recipients);
    const likes: Array<{ recipient: number; liker: Seeded }> = [];
    for (let r = 0; r < recipients; r++) {
      for (let k = 0; k < likesPerRecipient; k++) {
        const liker = likers[(r * likesPerRecipient + k) % likers.length];
        likes.push({ recipient: r, liker });
        samples[r].set(liker.userId, {});
      }
    }
    for (let i = likes.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [likes[i], likes[j]] = [likes[j], likes[i]];
    }
    const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
    const { port } = new URL(server.url);
    let failed = 0;
    const likeOne = (l: (typeof likes)[number]) =>
      new Promise<void>((resolve) => {
        const req = request(
          { host: '127.0.0.1', port, method: 'POST', path: `/api/posts/${posts[l.recipient]}/like`, agent, headers: { authorization: `Bearer ${l.liker.key}` } },
          (res) => {
            res.resume();
            res.on('end', () => {
              if (res.statusCode === 204) samples[l.recipient].get(l.liker.userId)!.acked = performance.now();
              else failed++;
              resolve();
            });
          },
        );
        req.on('error', () => {
          failed++;
          resolve();
        });
        req.end();
      });
    /** Runs `list` at `concurrency`, then waits (bounded) for its deliveries; returns the latencies. */
    const storm = async (label: string, list: typeof likes) => {
      const started = performance.now();
      let next = 0;
      await ctx.progress.timed(
        label,
        Math.max(1, Math.round(list.length / 1000)),
        async (report) => {
          const reporter = setInterval(() => report(`${next.toLocaleString('en-US')}/${list.length.toLocaleString('en-US')} likes`), 500);
          await Promise.all(
            Array.from({ length: concurrency }, async () => {
              while (next < list.length && performance.now() - started < DEADLINE_MS) await likeOne(list[next++]);
            }),
          );
          clearInterval(reporter);
        },
        () => `${list.length.toLocaleString('en-US')} likes in ${((performance.now() - started) / 1000).toFixed(1)} s`,
      );
      const seconds = (performance.now() - started) / 1000;
      const mine = list.map((l) => samples[l.recipient].get(l.liker.userId)!);
      const waitUntil = performance.now() + 10_000;
      while (mine.some((s) => s.acked !== undefined && s.received === undefined) && performance.now() < waitUntil) await new Promise((r) => setTimeout(r, 20));
      const latencies = mine.filter((s) => s.acked !== undefined && s.received !== undefined).map((s) => Math.max(0, s.received! - s.acked!));
      latencies.sort((a, b) => a - b);
      return { seconds, latencies, missing: mine.filter((s) => s.acked !== undefined && s.received === undefined).length };
    };
    // A warm-up of a tenth of the likes (at most 500), reported apart: the first notifications
    // after start pay for compiling, preparing statements and the pool's first tasks.
    const warmCount = Math.min(500, Math.floor(likes.length / 10));
    const warm = await storm('notify-ws warm-up likes', likes.slice(0, warmCount));
    await new Promise((r) => setTimeout(r, 1000));
    // This client's own stalls (its garbage collector with 10,000 sockets, say) delay the moment a
    // message is seen as much as the server would: reported, to tell the two apart.
    const loopDelay = monitorEventLoopDelay({ resolution: 5 });
    loopDelay.enable();
    const measured = await storm('notify-ws likes', likes.slice(warmCount));
    loopDelay.disable();
    const { latencies, missing } = measured;
    const stormSeconds = measured.seconds;
    agent.destroy();
    const peak = memory?.stop();
    const p50 = percentile(latencies, 0.5);
    const p99 = percentile(latencies, 0.99);
    const bytesPerSocket = Math.round((rssAfter - rssBefore) / (clients.length + heldOpen));
    return {
      rows: [
        {
          measure: `like's 204 → recipient's socket, ${(clients.length + heldOpen).toLocaleString('en-US')} sockets open`,
          rps: (likes.length - warmCount) / stormSeconds,
          p50_ms: round(p50),
          p99_ms: round(p99),
          errors: failed + missing + warm.missing,
          value: `p99 ${round(p99)} ms`,
          goal: atMost(100, p99, 'p99 < 100 ms', true),
          memory: peak,
        },
      ],
      notes: [`${bytesPerSocket.toLocaleString('en-US')} bytes of server RSS per open socket`],
      figures: {
        http_threads: ctx.options.threads,
        concurrency,
        sockets: clients.length + heldOpen,
        sockets_open_on_server: openOnServer,
        open_seconds: round(openSeconds, 2),
        rss_before_mb: round(rssBefore / 2 ** 20),
        rss_after_mb: round(rssAfter / 2 ** 20),
        bytes_per_socket: bytesPerSocket,
        warmup_likes: warmCount,
        warmup_p50_ms: round(percentile(warm.latencies, 0.5)),
        warmup_p99_ms: round(percentile(warm.latencies, 0.99)),
        likes: likes.length - warmCount,
        likes_failed: failed,
        storm_seconds: round(stormSeconds, 2),
        likes_per_second: Math.round((likes.length - warmCount) / stormSeconds),
        delivered: latencies.length,
        missing: missing + warm.missing,
        p50_ms: round(p50),
        p99_ms: round(p99),
        max_ms: round(latencies[latencies.length - 1] ?? NaN),
        goal_p99_ms: 100,
        client_loop_delay_max_ms: round(loopDelay.max / 1e6),
        client_loop_delay_p99_ms: round(loopDelay.percentile(99) / 1e6),
        memory: peak,
      },
    };
  } finally {
    for (const ws of clients) ws.terminate();
    if (holder && holder.exitCode === null) {
      const exited = new Promise((r) => holder!.once('exit', r));
      holder.kill('SIGTERM');
      await exited;
    }
  }
}

function openSocket(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

/** The holder: opens a socket per key, says how many, and keeps them until it is stopped. */
function hold(): void {
  process.once('message', async (m: { url: string; keys: string[] }) => {
    const held: WebSocket[] = [];
    for (let from = 0; from < m.keys.length; from += OPENING) {
      held.push(...(await Promise.all(m.keys.slice(from, from + OPENING).map((key) => openSocket(`${m.url}?access_token=${key}`)))));
    }
    process.send!({ open: held.length });
    process.once('SIGTERM', () => {
      for (const ws of held) ws.terminate();
      process.exit(0);
    });
  });
}

if (require.main === module && process.argv[2] === 'hold') hold();
