// Boots the real server (`bin/perch serve`) on an ephemeral port with a temporary data directory,
// and talks to it over HTTP. Every e2e test goes through here.
import { spawn, execFile, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { SERVE_ENVIRONMENT, SERVE_NODE_FLAGS } from '../../src/server/node-flags';
import { parseStat } from '../../bench/cpu';

export const ROOT = join(__dirname, '..', '..', '..');
export const PERCH = join(ROOT, 'bin', 'perch');

// Servers (and browsers: web/browser.ts) still running when the test process ends (a timed-out
// test, a crash) are killed with it, so none outlives its test run. A test file that runs past
// tap's timeout gets SIGALRM, whose default action ends the process without an 'exit' event:
// processes left then would load the machine for the rest of the suite.
const running = new Set<ChildProcess>();

/** Kills `child` when the test process ends, however it ends, unless it has exited before. */
export function endWithTestProcess(child: ChildProcess): void {
  running.add(child);
  child.once('exit', () => running.delete(child));
}

function killRunning(): void {
  for (const child of running) child.kill('SIGKILL');
}
process.once('exit', killRunning);
for (const signal of ['SIGTERM', 'SIGINT', 'SIGALRM'] as const) {
  process.once(signal, () => {
    killRunning();
    // With no other listener left, re-raise so the signal's default action still ends us.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  });
}

/** A port nobody listens on now (the kernel's choice of a free one on the loopback interface). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export function tempDataDir(prefix = 'perch-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Threads per test server: the suite runs once with 1 and once with 2 (PERCH_TEST_THREADS). */
export function testThreads(): number {
  return Number(process.env.PERCH_TEST_THREADS ?? '1') || 1;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], env: NodeJS.ProcessEnv = {}, opts: { cwd?: string } = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const childEnv = { ...cleanEnv(), ...env };
    const command = untraced([process.execPath, PERCH, ...args], childEnv);
    const child = execFile(command[0], command.slice(1), { env: childEnv, timeout: 30_000, cwd: opts.cwd }, (err, stdout, stderr) => {
      const failure = err as (Error & { code?: unknown; signal?: unknown; killed?: boolean }) | null;
      const code = failure ? failure.code : 0;
      // A command killed by a signal (a crash, or the timeout) has no exit code: it counts as 1,
      // and its stderr says which signal, so that a failing assertion shows why.
      const ended = failure && typeof code !== 'number' ? `[ended by ${String(failure.signal)}${failure.killed ? ' after the 30 s timeout' : ''}]\n` : '';
      resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr: stderr + ended });
    });
    // A command outlives a test process that is killed (a timeout, Ctrl-C): a `serve` among them
    // would go on holding its port and data directory.
    endWithTestProcess(child);
  });
}

/**
 * The environment a perch process of a test gets: without any PERCH_ variable of the developer's
 * shell, and without the test runner's module in NODE_OPTIONS (see `untraced`).
 */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('PERCH_')) env[k] = v;
  const nodeOptions = withoutTestRunner(env.NODE_OPTIONS ?? '');
  if (nodeOptions === '') delete env.NODE_OPTIONS;
  else env.NODE_OPTIONS = nodeOptions;
  return env;
}

/** NODE_OPTIONS without the options that load the test runner's modules (tap's, under @tapjs/). */
export function withoutTestRunner(nodeOptions: string): string {
  // Options are separated by spaces; one in double quotes may hold spaces (Node's own rule).
  const options = nodeOptions.match(/"(?:[^"\\]|\\.)*"|[^\s"]+/g) ?? [];
  const kept: string[] = [];
  for (const option of options) {
    if (!/[\\/]@tapjs[\\/]/.test(option)) kept.push(option);
    // `--import <module>` as two options: the flag goes with its module.
    else if (/^"?(--import|--require|-r|--loader|--experimental-loader)"?$/.test(kept[kept.length - 1] ?? '')) kept.pop();
  }
  return kept.join(' ');
}

/**
 * The command line that runs `command` (a Node.js process and its arguments) as a user would, with
 * the NODE_OPTIONS of `env` and nothing else. tap loads a module of its own into every process a
 * test starts (it records each process and the sources it loads, for coverage, which this suite
 * does not collect) and adds it to NODE_OPTIONS again at every spawn, whatever environment the
 * test passes; in a perch process it doubled the CPU of each server start and command. `env`
 * (coreutils) sets NODE_OPTIONS as the process starts, then execs it, so the pid is the command's.
 */
export function untraced(command: string[], env: NodeJS.ProcessEnv): string[] {
  const nodeOptions = env.NODE_OPTIONS ?? '';
  return ['env', ...(nodeOptions === '' ? ['-u', 'NODE_OPTIONS'] : [`NODE_OPTIONS=${nodeOptions}`]), ...command];
}

export interface StartOptions {
  threads?: number | null;
  config?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  dataDir?: string;
  port?: number;
  /**
   * A command that runs the server: the server's own command line is appended to it (e.g. a
   * mount namespace with a small tmpfs, for full-disk tests). It must exec, so the pid is the server's.
   */
  launcher?: string[];
}

export interface Key {
  key: string;
  key_id: string;
  user_id: string;
  handle: string;
  admin: boolean;
}

export interface ReqOptions {
  headers?: Record<string, string>;
  json?: unknown;
  body?: string | Buffer;
  key?: string;
}

export interface Res {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export class TestServer {
  readonly url: string;
  /** Set by stop() and expectExit(): an exit after it is the test's own doing, not reported. */
  exitExpected = false;
  constructor(
    readonly proc: ChildProcess,
    readonly port: number,
    readonly dataDir: string,
    readonly logs: string[],
    private readonly ownsDir: boolean,
  ) {
    this.url = `http://127.0.0.1:${port}`;
  }

  async request(method: string, path: string, opts: ReqOptions = {}): Promise<Res> {
    const headers: Record<string, string> = { ...opts.headers };
    let body: string | Buffer | undefined = opts.body;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers['content-type'] ??= 'application/json';
    }
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    const r = await fetch(this.url + path, { method, headers, body, redirect: 'manual' });
    const text = await r.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: r.status, headers: r.headers, text, json };
  }

  get(path: string, opts?: ReqOptions) {
    return this.request('GET', path, opts);
  }
  post(path: string, opts?: ReqOptions) {
    return this.request('POST', path, opts);
  }

  cli(args: string[], env?: NodeJS.ProcessEnv): Promise<CliResult> {
    return runCli([...args, '--data', this.dataDir], env);
  }

  /**
   * A key for `handle` (its user made first when new), as `perch keygen --json` prints it, made
   * in this process by the function the command runs (`createKey`). A `perch keygen` process
   * costs about half a second of CPU to start, and the suite needs a few hundred keys; the
   * command itself is tested on its own (cli, operator-cli, backup, hot-store tests).
   */
  async keygen(handle: string, admin = false): Promise<Key> {
    // Loaded on first use: most test files that import this helper make no key.
    const { createKey } = await import('../../src/cli/keys.js');
    const { userCreated: _, ...key } = await createKey(this.dataDir, handle, admin);
    return key;
  }

  /** The id of a user's newest key, as `perch keys list` shows it. */
  async newestKeyId(userId: string): Promise<string> {
    const list = await this.cli(['keys', 'list', '--user', userId, '--json']);
    if (list.code !== 0) throw new Error(`keys list failed: ${list.stderr}`);
    const keys = JSON.parse(list.stdout) as Array<{ key_id: string }>;
    return keys[keys.length - 1].key_id;
  }

  /** For a test that makes the server stop by itself (a fatal fault): its exit is not reported. */
  expectExit(): void {
    this.exitExpected = true;
  }

  /** Sends a signal and resolves with the exit code. */
  stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    return new Promise((resolve) => {
      if (this.proc.exitCode !== null || this.proc.signalCode !== null) return resolve(this.proc.exitCode);
      this.exitExpected = true;
      this.proc.once('exit', (code) => resolve(code));
      this.proc.kill(signal);
    });
  }

  async close(): Promise<void> {
    await this.stop('SIGTERM');
    if (this.ownsDir) rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/**
 * How long a server may take to listen. A start takes under a second alone and up to about two
 * beside the whole suite; the margin is for a machine whose disk stalls (a start syncs several
 * files), so that only a start that is stuck fails.
 */
const START_TIMEOUT_MS = 60_000;

/**
 * Each thread of a process as `name state cpu-seconds wchan` (from /proc: Linux only, else empty):
 * shows whether a start that did not end was running, waiting on a lock, or on the disk.
 */
function threadStates(pid: number | undefined): string {
  if (pid === undefined) return '';
  try {
    return readdirSync(`/proc/${pid}/task`)
      .map((tid) => {
        const stat = parseStat(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'));
        let wchan = '';
        try {
          wchan = readFileSync(`/proc/${pid}/task/${tid}/wchan`, 'utf8');
        } catch {
          wchan = '?';
        }
        return stat ? `${stat.name} ${stat.state} ${stat.cpuSeconds}s ${wchan}` : `${tid} ? ${wchan}`;
      })
      .join('; ');
  } catch {
    return '';
  }
}

/**
 * Each thread's native stack, from gdb where it is installed (else empty): a start stuck in native
 * code shows in /proc only as a futex wait; the stack says which lock, and who takes it. Attaching
 * stops the process, which is killed right after anyway.
 */
function nativeStacks(pid: number | undefined): string {
  if (pid === undefined) return '';
  try {
    const out = execFileSync('gdb', ['-batch', '-p', String(pid), '-ex', 'thread apply all bt 25'], { encoding: 'utf8', timeout: 30_000, stdio: ['ignore', 'pipe', 'ignore'] });
    return out
      .split('\n')
      .filter((l) => l.startsWith('Thread ') || l.startsWith('#'))
      .map((l) => l.replace(/ \(.*?\) at .*$/, '').slice(0, 160))
      .slice(0, 300)
      .join('\n');
  } catch {
    return '';
  }
}

/**
 * A server that fails on its own while a test uses it leaves the test failing on requests that
 * are refused, with nothing to say why: this prints the exit, its stderr and its last log lines,
 * on stdout where the reporter shows them (each line starting with "server", so none reads as TAP).
 */
function reportUnexpectedExit(server: TestServer, code: number | null, signal: NodeJS.Signals | null, stderr: string): void {
  const lines = [
    `server on port ${server.port} exited by itself (code ${code}, signal ${signal})`,
    ...stderr.trim().split('\n').filter(Boolean).slice(-20).map((l) => `server stderr: ${l}`),
    ...server.logs.slice(-20).map((l) => `server log: ${l}`),
  ];
  process.stdout.write(lines.join('\n') + '\n');
}

/**
 * Tests running now that limit the servers they may boot (helpers/command-test.ts): a command
 * test boots none; a test of servers with a thread count of their own boots none that follows
 * the pass.
 */
const limitingTests = { commands: 0, pinned: 0 };

async function whileRunning(kind: keyof typeof limitingTests, fn: () => Promise<void>): Promise<void> {
  limitingTests[kind]++;
  try {
    await fn();
  } finally {
    limitingTests[kind]--;
  }
}

/** Runs `fn`, in which startServer refuses to boot a server (a command test's body). */
export function withoutServers(fn: () => Promise<void>): Promise<void> {
  return whileRunning('commands', fn);
}

/** Runs `fn`, in which startServer refuses to boot a server whose thread count follows the pass. */
export function withPinnedThreads(fn: () => Promise<void>): Promise<void> {
  return whileRunning('pinned', fn);
}

export async function startServer(opts: StartOptions = {}): Promise<TestServer> {
  if (limitingTests.commands > 0) {
    // Such a test runs in one pass only: a server in it would never be tested at two threads.
    throw new Error('a command test boots no server: declare this one with t.test, so that it runs at two HTTP threads too');
  }
  if (limitingTests.pinned > 0 && opts.threads === undefined) {
    throw new Error('a test of servers with their own thread count boots none that follows the pass: give this one its threads, or declare the test with t.test');
  }
  const ownsDir = !opts.dataDir;
  const dataDir = opts.dataDir ?? tempDataDir();
  const args = [PERCH, 'serve', '--port', String(opts.port ?? 0), '--data', dataDir];
  // threads: null leaves the thread count to the configuration.
  if (opts.threads !== null) args.push('--threads', String(opts.threads ?? testThreads()));
  if (opts.config) {
    const file = join(dataDir, `test-config-${Date.now()}-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, JSON.stringify(opts.config));
    args.push('--config', file);
  }
  // As `npm start` and the service units start it (server/node-flags.ts).
  const node = [process.execPath, ...SERVE_NODE_FLAGS];
  const env = { ...cleanEnv(), ...SERVE_ENVIRONMENT, ...opts.env };
  const command = untraced(opts.launcher ? [...opts.launcher, ...node, ...args] : [...node, ...args], env);
  const proc = spawn(command[0], command.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  endWithTestProcess(proc);
  const logs: string[] = [];
  return new Promise((resolve, reject) => {
    let buffered = '';
    let stderr = '';
    const timer = setTimeout(() => {
      // What the server was doing, for a start that never ends: each thread's state, CPU time and
      // kernel wait, and what it logged (tests that start it logging only warnings show little).
      const threads = threadStates(proc.pid);
      const stacks = nativeStacks(proc.pid);
      proc.kill('SIGKILL');
      reject(new Error(`server did not start in ${START_TIMEOUT_MS / 1000} s: ${stderr}\nthreads: ${threads}\nlog: ${logs.slice(-20).join('\n')}${stacks ? `\nnative stacks:\n${stacks}` : ''}`));
    }, START_TIMEOUT_MS);
    proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    proc.stdout!.on('data', (d: Buffer) => {
      buffered += d.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) !== -1) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        logs.push(line);
        if (line.includes('"msg":"listening"')) {
          proc.off('exit', exitedBeforeListening);
          clearTimeout(timer);
          const server = new TestServer(proc, JSON.parse(line).port as number, dataDir, logs, ownsDir);
          proc.once('exit', (code, signal) => {
            if (!server.exitExpected && code !== 0) reportUnexpectedExit(server, code, signal, stderr);
          });
          resolve(server);
        }
      }
    });
    function exitedBeforeListening(code: number | null): void {
      clearTimeout(timer);
      // A start that failed gives nobody a server to close, so the directory made for it goes
      // here (a start refused on purpose would leave one behind in every run of the suite).
      if (ownsDir) rmSync(dataDir, { recursive: true, force: true });
      reject(new Error(`server exited with ${code} before listening: ${stderr.trim()}`));
    }
    proc.once('exit', exitedBeforeListening);
  });
}
