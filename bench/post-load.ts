// A post load in a process of its own, so that it does not share a thread with the load it runs
// beside (the redirect scenario's redirects beside posts). At a fixed rate the posts are sent
// evenly (paced-load.ts); at 0, as fast as they go, by autocannon. The API keys come on stdin as a
// JSON array; the summary goes to stdout as one JSON line.
//   node dist/bench/post-load.js <url> <posts-per-second, 0: as fast as it goes> <seconds> <connections>
import { spawn } from 'node:child_process';
import { autocannon, bearer, postLoad, summarize, type LoadSummary } from './load';
import { pacedLoad } from './paced-load';

async function runPostLoad(url: string, rate: number, seconds: number, connections: number, keys: string[]): Promise<void> {
  let summary: LoadSummary;
  if (rate > 0) {
    // The same request as autocannon's post load sends, each connection with its key in turn.
    const post = postLoad(url);
    summary = await pacedLoad({
      url,
      rate,
      seconds,
      connections,
      request: (i) => ({
        method: post.method!,
        path: new URL(post.url).pathname,
        headers: { ...post.headers, ...(keys.length > 0 ? bearer(keys[i % keys.length]) : {}) },
        body: post.body,
      }),
    });
  } else {
    // Rate samples every 250 ms for a short run: a run ends at its first sample after the duration.
    summary = summarize(await autocannon({ ...postLoad(url, keys), duration: seconds, sampleInt: seconds < 2 ? 250 : 1000, connections }));
  }
  const cpu = process.cpuUsage();
  const out: PostLoadSummary = { ...summary, generator_cpu_s: Math.round((cpu.user + cpu.system) / 1e3) / 1e3 };
  process.stdout.write(JSON.stringify(out) + '\n');
}

/** A post load's summary, with the CPU time its process took (start included), in seconds. */
export interface PostLoadSummary extends LoadSummary {
  generator_cpu_s: number;
}

/** Starts a post load in a child process; resolves with its summary when it ends. */
export function startPostLoad(url: string, rate: number, seconds: number, connections: number, keys: readonly string[], adopt: (proc: ReturnType<typeof spawn>) => void): Promise<PostLoadSummary> {
  const proc = spawn(process.execPath, [__filename, url, String(rate), String(seconds), String(connections)], { stdio: ['pipe', 'pipe', 'inherit'] });
  adopt(proc);
  proc.stdin!.end(JSON.stringify(keys));
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d));
  return new Promise((resolve, reject) => {
    proc.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`the post load exited with ${code}`));
      resolve(JSON.parse(out.trim().split('\n').pop()!) as PostLoadSummary);
    });
  });
}

/**
 * How long a post load started beside a measured load runs before it, its process's start
 * included: long enough that the measured load starts beside posts that come steadily, from a
 * generator whose code V8 has compiled for the way it runs (in its first second it costs the
 * machine several times as much a post).
 */
const BESIDE_LEAD_MS = 1000;

/**
 * Runs `measure` (a load of `seconds`) with a post load beside it from a process of its own, which
 * starts first and ends about a second after, so that the whole measured run has posts beside it.
 * A process of its own, because a load generator's thread that the measured load keeps busy would
 * otherwise pay for the posts too.
 */
export async function besidePostLoad<T>(
  url: string,
  post: { rate: number; seconds: number; connections: number; keys: readonly string[] },
  adopt: (proc: ReturnType<typeof spawn>) => void,
  measure: () => Promise<T>,
): Promise<{ measured: T; posts: PostLoadSummary }> {
  const posts = startPostLoad(url, post.rate, post.seconds + Math.ceil(BESIDE_LEAD_MS / 1000) + 1, post.connections, post.keys, adopt);
  await new Promise((resolve) => setTimeout(resolve, BESIDE_LEAD_MS));
  const measured = await measure();
  return { measured, posts: await posts };
}

if (require.main === module) {
  let input = '';
  process.stdin.on('data', (d: Buffer) => (input += d));
  process.stdin.on('end', () => {
    const [url, rate, seconds, connections] = process.argv.slice(2);
    runPostLoad(url, Number(rate), Number(seconds), Number(connections), JSON.parse(input) as string[]).catch((err) => {
      process.stderr.write(`post load failed: ${(err as Error).stack}\n`);
      process.exit(1);
    });
  });
}
