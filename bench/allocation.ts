// What the server's main thread allocates per post under a post load, garbage included: the main
// thread's young-generation collections (and the work they bring on V8's helper thread) grow with
// it, and unlike a rate it comes out the same from run to run, so a change to the request path
// shows in one run (docs/architecture.md, "Garbage on the request path").
//   node dist/bench/allocation.js [posts-per-second=10000] [seconds=6] [sites=25]
// It seeds 50 authors with 10 followers each (as `perch bench posts`), starts `perch serve` (one
// HTTP thread, the serve flags) with the inspector on a loopback port, posts at a fixed rate for
// 2 s to warm up, then samples the main thread's allocations with V8's sampling heap profiler,
// counting objects collected since, while the same load runs `seconds` more. It prints bytes per
// post, the sites that allocated most (function and line of the built JavaScript), and one JSON
// line. The load is bounded, and the server and the inspector listen on 127.0.0.1 only.
import { rmSync } from 'node:fs';
import WebSocket from 'ws';
import { freePort, startServer, tempDataDir } from '../test/helpers/server';
import { openSqlite } from '../src/store/sqlite';
import { migrateAll } from '../src/capabilities';
import { seedAuthorsWithFollowers } from './seed';
import { startPostLoad } from './post-load';

const WARMUP_S = 2;
const CONNECTIONS = 64;
/** Bytes between samples: small enough for a steady figure over tens of thousands of posts. */
const SAMPLING_INTERVAL = 2048;

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children?: ProfileNode[];
}

export interface AllocationSite {
  site: string;
  bytes_per_post: number;
}

export interface AllocationResult {
  posts_per_second: number;
  posts: number;
  bytes_per_post: number;
  sites: AllocationSite[];
}

/** A DevTools protocol session with the process whose inspector listens on `port`. */
async function inspectorSession(port: number): Promise<{ call(method: string, params?: object): Promise<Record<string, unknown>>; close(): void }> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
  const ws = new WebSocket(targets[0].webSocketDebuggerUrl);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let id = 0;
  const waiting = new Map<number, { resolve(v: Record<string, unknown>): void; reject(e: Error): void }>();
  ws.on('message', (data: Buffer) => {
    const m = JSON.parse(data.toString()) as { id?: number; result?: Record<string, unknown>; error?: { message: string } };
    const w = m.id === undefined ? undefined : waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id!);
    if (m.error) w.reject(new Error(m.error.message));
    else w.resolve(m.result ?? {});
  });
  return {
    call: (method, params = {}) =>
      new Promise((resolve, reject) => {
        const n = ++id;
        waiting.set(n, { resolve, reject });
        ws.send(JSON.stringify({ id: n, method, params }));
      }),
    close: () => ws.close(),
  };
}

/** Bytes by allocating function (name, file and line), over the whole sampled profile. */
export function bytesBySite(head: ProfileNode): Map<string, number> {
  const out = new Map<string, number>();
  const stack = [head];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.selfSize > 0) {
      const { functionName, url, lineNumber } = node.callFrame;
      const site = `${functionName || '(anonymous)'} ${url.slice(url.lastIndexOf('/') + 1) || '(native)'}:${lineNumber + 1}`;
      out.set(site, (out.get(site) ?? 0) + node.selfSize);
    }
    if (node.children) stack.push(...node.children);
  }
  return out;
}

export async function measureAllocation(rate: number, seconds: number, topSites = 25): Promise<AllocationResult> {
  const dataDir = tempDataDir('perch-bench-allocation-');
  let keys: string[];
  {
    const db = openSqlite(dataDir);
    migrateAll(db);
    keys = seedAuthorsWithFollowers(db, 50, 10).map((a) => a.key);
    db.close();
  }
  const port = await freePort();
  const children: Array<{ kill(): boolean }> = [];
  const adopt = (proc: { kill(): boolean }) => children.push(proc);
  const server = await startServer({ dataDir, threads: 1, config: { log: { level: 'warn' } }, env: { NODE_OPTIONS: `--inspect=127.0.0.1:${port}` } });
  try {
    await startPostLoad(server.url, rate, WARMUP_S, CONNECTIONS, keys, adopt);
    const session = await inspectorSession(port);
    try {
      await session.call('HeapProfiler.enable');
      await session.call('HeapProfiler.startSampling', {
        samplingInterval: SAMPLING_INTERVAL,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      });
      const load = await startPostLoad(server.url, rate, seconds, CONNECTIONS, keys, adopt);
      const { profile } = (await session.call('HeapProfiler.stopSampling')) as { profile: { head: ProfileNode } };
      const posts = load.status_2xx;
      if (posts === 0) throw new Error('no post was created');
      const sites = [...bytesBySite(profile.head)].sort((a, b) => b[1] - a[1]);
      const total = sites.reduce((n, [, bytes]) => n + bytes, 0);
      return {
        posts_per_second: Math.round(load.rps),
        posts,
        bytes_per_post: Math.round(total / posts),
        sites: sites.slice(0, topSites).map(([site, bytes]) => ({ site, bytes_per_post: Math.round(bytes / posts) })),
      };
    } finally {
      session.close();
    }
  } finally {
    for (const child of children) child.kill();
    await server.stop('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const [rate = 10_000, seconds = 6, sites = 25] = process.argv.slice(2).map(Number);
  const r = await measureAllocation(rate, seconds, sites);
  process.stdout.write(`${r.posts} posts at ${r.posts_per_second} a second: ${r.bytes_per_post} bytes allocated a post on the main thread\n`);
  for (const s of r.sites) process.stdout.write(`${String(s.bytes_per_post).padStart(7)}  ${s.site}\n`);
  process.stdout.write(JSON.stringify({ scenario: 'allocation', ...r }) + '\n');
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  });
}
