// perch bench's command line: the list of scenarios with their goals, bad input, and --url against
// a running server (what it can seed with a key runs, the rest says why it is skipped).
import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { PERCH, cleanEnv, runCli, startServer, untraced } from '../helpers/server';
import { runBench } from '../helpers/bench';
import { parseStat } from '../../bench/cpu';
import { SERVE_ENVIRONMENT, SERVE_NODE_FLAGS } from '../../src/server/node-flags';

t.test('without a scenario it lists every scenario with its goal', async (t) => {
  const r = await runCli(['bench']);
  t.equal(r.code, 0);
  for (const name of ['redirect', 'shorten', 'posts', 'timeline', 'readwrite', 'fanout', 'limiter', 'search', 'suggest', 'notify-ws', 'mixed']) {
    t.match(r.stdout, new RegExp(`^${name}\\s`, 'm'), `lists ${name}`);
  }
  t.match(r.stdout, /ratio ≥ 0\.85; peak RSS ≤ 160 MiB, anonymous ≤ 128 MiB/, 'redirect with its throughput and memory goals');
  t.match(r.stdout, /combined ≥ 0\.9; reads beside 1,000 posts\/s ≥ 0\.8/, 'readwrite with its two goals');
  t.match(r.stdout, /p99 < 100 ms/, 'notify-ws with its goal');
});

t.test('a bad scenario or flag prints one line and exits 2', async (t) => {
  for (const args of [['bench', 'nosuch'], ['bench', 'redirect', '--duration', '0'], ['bench', 'redirect', '--url', 'ftp://x'], ['bench', 'redirect', '--key', 'k']]) {
    const r = await runCli(args);
    t.equal(r.code, 2, args.join(' '));
    t.equal(r.stderr.trim().split('\n').length, 1, `one line: ${r.stderr.trim()}`);
  }
});

t.test('--url measures a running server with a key, and skips what it cannot seed', async (t) => {
  const server = await startServer({ threads: 1 });
  t.teardown(() => server.close());
  const { key } = await server.keygen('benchuser');
  const run = await runBench(['redirect', 'fanout', '--url', server.url, '--key', key, '--quick'], 120_000);
  t.equal(run.code, 0, `exits 0: ${run.stderr.slice(-2000)}`);
  const [redirect, fanout] = run.entries;
  t.equal(redirect.status, 'measured', 'redirect ran against the running server');
  t.ok(redirect.figures.links > 0, 'over links the key created');
  t.type(redirect.rows[0].memory?.peak_rss_mib, 'number', "the running server's memory, found by its port");
  t.equal(redirect.audit, undefined, 'no click audit without the data directory');
  t.equal(fanout.status, 'skipped', 'fanout is skipped');
  t.match(fanout.reason, /10,000 followers/, 'and says why');
  t.match(run.stdout, /fanout\s+skipped: needs an author with 10,000 followers/, 'the table says so too');
});

t.test("the load generator runs without the server's Node.js flags and environment, even when perch is started with them", async (t) => {
  // As the bin/perch shebang starts every command, `perch serve`'s heap flags and environment included.
  const run = await runBench(['limiter', '--quick'], 120_000, [...SERVE_NODE_FLAGS, '--stack-size=2000'], { ...SERVE_ENVIRONMENT });
  t.equal(run.code, 0, `exits 0: ${run.stderr.slice(-2000)}`);
  t.equal(run.entries.length, 1, 'the figures of the run, written by the process that ran it');
  t.equal(run.entries[0].status, 'measured');
  t.same(run.entries[0].settings.load_generator_node_flags, ['--stack-size=2000'], "the serve flags dropped, the others kept");
  t.same(run.entries[0].settings.load_generator_environment, { MALLOC_ARENA_MAX: null }, "the serve environment dropped");
  t.match(run.stdout, /^limiter\s/m, 'its table on the same stdout');
  const plain = await runBench(['limiter', '--quick'], 120_000);
  t.equal(plain.code, 0);
  t.same(plain.entries[0].settings.load_generator_node_flags, [], 'started without them: run as it is');
  t.same(plain.entries[0].settings.load_generator_environment, { MALLOC_ARENA_MAX: null });
  // The environment alone (`MALLOC_ARENA_MAX=2 node bin/perch bench ...`) is dropped too.
  const envOnly = await runBench(['limiter', '--quick'], 120_000, [], { ...SERVE_ENVIRONMENT });
  t.equal(envOnly.code, 0, `exits 0: ${envOnly.stderr.slice(-2000)}`);
  t.same(envOnly.entries[0].settings.load_generator_environment, { MALLOC_ARENA_MAX: null }, 'the serve environment dropped');
});

/** A process's command line, its arguments joined by spaces. */
function cmdlineOf(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
}

/** Every process below `root` now (children, their children, ...): pid and command line. */
function descendants(root: number): Map<number, string> {
  const parentOf = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = parseStat(readFileSync(`/proc/${name}/stat`, 'utf8'));
      if (stat) parentOf.set(Number(name), stat.ppid);
    } catch {
      // ended meanwhile
    }
  }
  const found = new Map<number, string>();
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, ppid] of parentOf) {
      if (found.has(pid) || (ppid !== root && !found.has(ppid))) continue;
      try {
        found.set(pid, cmdlineOf(pid));
        grew = true;
      } catch {
        // ended meanwhile
      }
    }
  }
  return found;
}

/** Whether `pid` still runs the command it ran (a zombie, or a pid given to another, does not). */
function stillRunning(pid: number, cmdline: string): boolean {
  try {
    if (parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.state === 'Z') return false;
    return cmdlineOf(pid) === cmdline;
  } catch {
    return false;
  }
}

t.test('a SIGTERM stops the run, every server and process it started, and removes their directories', { skip: process.platform !== 'linux' && 'reads /proc' }, async (t) => {
  // With the serve flags, as the bin/perch shebang starts it: this process runs the bench again
  // without them and must pass the signal on.
  const env = cleanEnv();
  const command = untraced([process.execPath, ...SERVE_NODE_FLAGS, PERCH, 'bench', 'posts', '--quick'], env);
  const bench = spawn(command[0], command.slice(1), { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  bench.stderr!.on('data', (d: Buffer) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => bench.once('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (bench.exitCode === null) bench.kill('SIGKILL');
  });
  // Until the baseline and the perch server both run (and the load has started against one).
  let started = new Map<number, string>();
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    started = descendants(bench.pid!);
    const commands = [...started.values()];
    if (commands.some((c) => c.includes('bare-uws.js')) && commands.some((c) => c.includes(' serve ')) && /round 1\/|warm-up/.test(stderr)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const servers = [...started.values()].filter((c) => c.includes('bare-uws.js') || c.includes(' serve '));
  t.ok(servers.length >= 2, `a baseline and perch were running: ${servers.join(' | ')}`);
  const dataDirs = [...started.values()].flatMap((c) => c.match(/--data (\S+)/)?.[1] ?? []);
  t.ok(dataDirs.length >= 1, 'the perch server on a data directory of the run');
  bench.kill('SIGTERM');
  t.equal(await exited, 143, `exits with 128 + SIGTERM: ${stderr.slice(-500)}`);
  t.match(stderr, /SIGTERM: stopping the servers this run started/);
  const left = [...started].filter(([pid, cmdline]) => stillRunning(pid, cmdline));
  t.same(left.map(([, c]) => c), [], 'no process of the run left running');
  t.same(dataDirs.filter((d) => existsSync(d)), [], 'its data directories removed');
});
