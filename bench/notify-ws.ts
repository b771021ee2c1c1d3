// notify-ws: real-time notification delivery with many sockets open. 10,000 users hold a WebSocket
// each on /ws; then a storm of likes (5 distinct likers per post, shuffled) hits one post of each of
// 1,000 of them (after a warm-up of a tenth of them, reported apart). Each sample is the time from the like's 204 (as this client receives it) until
// the recipient's socket receives a notification that names the liker; the goal is p99 < 100 ms.
// Memory per open socket is the server process's RSS after the sockets opened minus before, over
// the sockets. The sockets of users who receive nothing are held by a second process (`hold`), so
// that the process that times deliveries is not slowed by them; its own event-loop stalls are
// reported too (client_loop_delay_*), since they delay what it sees as much as the server would.
//   node dist/bench/notify-ws.js [sockets=10000] [recipients=1000] [likes-per-recipient=5] [http-threads=1] [concurrency=32]
// Bounded: the storm is a fixed number of likes (recipients × likes-per-recipient) and the run gives
// up after 120 s; everything listens on 127.0.0.1.
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import WebSocket from 'ws';
import { startServer, tempDataDir, type TestServer } from '../test/helpers/server';
import { openSqlite } from '../src/store/sqlite';
import { migrateAll } from '../src/capabilities';
import { seedOnePostEach, seedUsers, type Seeded } from './seed';

const sockets = Number(process.argv[2] ?? 10_000);
const recipients = Number(process.argv[3] ?? 1000);
const likesPerRecipient = Number(process.argv[4] ?? 5);
const threads = Number(process.argv[5] ?? 1);
const concurrency = Number(process.argv[6] ?? 32);
const DEADLINE_MS = 120_000;
/** Sockets opening at once. */
const OPENING = 200;

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const round = (x: number, digits = 1) => Number(x.toFixed(digits));

interface Sample {
  acked?: number;
  received?: number;
}

async function main(): Promise<void> {
  if (recipients * (likesPerRecipient + 1) > sockets) throw new Error('need sockets >= recipients × (likes-per-recipient + 1)');
  const dataDir = tempDataDir('perch-bench-notify-');
  const db = openSqlite(dataDir);
  migrateAll(db);
  const users: Seeded[] = seedUsers(db, 'u', sockets, true);
  const targets = users.slice(0, recipients);
  const posts = seedOnePostEach(db, targets.map((u) => u.userId));
  db.close();

  const server: TestServer = await startServer({ dataDir, threads });
  const clients: WebSocket[] = [];
  let holder: ChildProcess | undefined;
  try {
    const pid = server.proc.pid!;
    // A moment for start-up work (code pool, JIT) to settle before the first reading.
    await new Promise((r) => setTimeout(r, 1000));
    const rssBefore = rssBytes(pid);

    // samples[recipient index] maps liker id → its sample.
    const samples = targets.map(() => new Map<string, Sample>());
    const wsUrl = server.url.replace('http:', 'ws:') + '/ws';
    const openStarted = performance.now();
    // The sockets of users who receive nothing are held by a second process, so that this one,
    // which times the deliveries, carries only the recipients' sockets and the like load.
    holder = fork(__filename, ['hold'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
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
    const heldOpen = await held;
    const openSeconds = (performance.now() - openStarted) / 1000;
    await new Promise((r) => setTimeout(r, 2000));
    const rssAfter = rssBytes(pid);
    const openOnServer = Number(/^perch_ws_open_sockets (\d+)/m.exec((await server.get('/metrics')).text)?.[1] ?? NaN);

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
    const storm = async (list: typeof likes) => {
      const started = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < list.length && performance.now() - started < DEADLINE_MS) await likeOne(list[next++]);
        }),
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
    const warm = await storm(likes.slice(0, warmCount));
    await new Promise((r) => setTimeout(r, 1000));
    // This client's own stalls (its garbage collector with 10,000 sockets, say) delay the moment a
    // message is seen as much as the server would: reported, to tell the two apart.
    const loopDelay = monitorEventLoopDelay({ resolution: 5 });
    loopDelay.enable();
    const measured = await storm(likes.slice(warmCount));
    loopDelay.disable();
    const { latencies, missing } = measured;
    const stormSeconds = measured.seconds;
    agent.destroy();
    process.stdout.write(
      JSON.stringify({
        scenario: 'notify-ws',
        http_threads: threads,
        sockets: clients.length + heldOpen,
        sockets_open_on_server: openOnServer,
        open_seconds: round(openSeconds, 2),
        rss_before_mb: round(rssBefore / 2 ** 20),
        rss_after_mb: round(rssAfter / 2 ** 20),
        bytes_per_socket: Math.round((rssAfter - rssBefore) / (clients.length + heldOpen)),
        warmup_likes: warmCount,
        warmup_p50_ms: round(percentile(warm.latencies, 50)),
        warmup_p99_ms: round(percentile(warm.latencies, 99)),
        likes: likes.length - warmCount,
        likes_failed: failed,
        storm_seconds: round(stormSeconds, 2),
        likes_per_second: Math.round((likes.length - warmCount) / stormSeconds),
        delivered: latencies.length,
        missing: missing + warm.missing,
        p50_ms: round(percentile(latencies, 50)),
        p99_ms: round(percentile(latencies, 99)),
        max_ms: round(latencies[latencies.length - 1] ?? NaN),
        goal_p99_ms: 100,
        client_loop_delay_max_ms: round(loopDelay.max / 1e6),
        client_loop_delay_p99_ms: round(loopDelay.percentile(99) / 1e6),
      }) + '\n',
    );
  } finally {
    for (const ws of clients) ws.terminate();
    if (holder && holder.exitCode === null) {
      const exited = new Promise((r) => holder!.once('exit', r));
      holder.kill('SIGTERM');
      await exited;
    }
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
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

if (process.argv[2] === 'hold') hold();
else
  main().then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`notify-ws: ${(err as Error).stack}\n`);
      process.exit(1);
    },
  );
