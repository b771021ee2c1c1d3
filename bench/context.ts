// What a scenario of `perch bench` works with: the options it was given (with its own defaults
// where none was), the servers it starts (perch on a temporary data directory, the bare uWS
// baselines), the load runs with their progress line, the memory of the perch process, and the
// cleanup of all of it when the scenario ends, whether it ended well or not.
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, tempDataDir, type TestServer } from '../test/helpers/server';
import { autocannon, failures, summarize, type LoadOptions, type LoadSummary } from './load';
import { MemoryWatcher, pidListeningOn, type MemoryPeak } from './memory';
import { cpuPerRequestUs, sumCpu, withCpu } from './cpu';
import { medianBy, medianDefined } from './median';
import type { Progress } from './progress';

export interface BenchOptions {
  /** Seconds per measured run; each scenario's own default when absent. */
  duration?: number;
  /** Connections of the load generator; each scenario's own default when absent. */
  connections?: number;
  /** HTTP threads of the perch server this tool starts. */
  threads: number;
  /** Rounds of each comparison; each scenario's own default when absent. */
  rounds?: number;
  /** A running perch server to measure instead of starting one. */
  url?: string;
  /** API keys of that running server, for scenarios that need a user. */
  keys: string[];
  /** Check that the tool works: 1 s runs, one round, small data sets, no warm-up. Not a measurement. */
  quick: boolean;
}

/** Thrown by a scenario that cannot run as asked (with --url, what it cannot seed). */
export class SkipScenario extends Error {}

/** A goal and whether the figure meets it (undefined: no figure to judge). */
export interface Goal {
  text: string;
  met?: boolean;
}

/** One line of the table. */
export interface Row {
  /** What the line measures. */
  measure: string;
  rps?: number;
  p50_ms?: number;
  p99_ms?: number;
  /** Requests without the answer they should have had. */
  errors?: number;
  baseline_rps?: number;
  /** The figure compared with the goal, when it is a ratio. */
  ratio?: number;
  /** A figure that is not a ratio (a time, a rate), shown where the ratio goes. */
  value?: string;
  goal?: Goal;
  memory?: MemoryPeak;
}

/** One check of an audit, with the figures it compared. */
export interface AuditCheck {
  check: string;
  ok: boolean;
  figures: Record<string, unknown>;
}

export interface ScenarioResult {
  rows: Row[];
  /** Every figure the scenario measured, for --json. */
  figures: Record<string, unknown>;
  notes?: string[];
  audit?: AuditCheck[];
}

/** The perch server a scenario measures: one this tool started, or the running one of --url. */
export interface PerchTarget {
  url: string;
  /** Its process, when visible on this machine (its memory is read from /proc). */
  pid?: number;
  /** The server this tool started, with its data directory; absent with --url. */
  server?: TestServer;
}

/** A comparison's rounds, its median round, and its warm-up runs (counted ones with --quick). */
export interface Comparison {
  rounds: Round[];
  median: Round;
  warmups: { baseline?: LoadSummary; perch?: LoadSummary };
}

/** Answers of each side of a comparison round. */
export interface Round {
  baseline: LoadSummary[];
  perch: LoadSummary;
  baseline_rps: number;
  ratio: number;
  /** CPU of the perch process per request it answered in this round's run (bench/cpu.ts), in us. */
  perch_cpu_us?: number;
  /** The same of the baseline's process, over its two runs. */
  baseline_cpu_us?: number;
}

/** The length of a run with --quick: enough for every part of a scenario to run, not to measure it. */
const QUICK_SECONDS = 0.5;

/**
 * With --quick a comparison has no timed warm-up; each side first gets this many answers a
 * connection instead, unmeasured: on a loaded machine a cold server's first answers (a first group
 * commit, say) can take longer than the half second of a quick run, and a run that ended before
 * any answered measured nothing.
 */
const QUICK_WARMUP_ANSWERS_PER_CONNECTION = 2;

/** autocannon's number of connections when a load does not set one. */
const DEFAULT_CONNECTIONS = 10;

/**
 * autocannon ends a run at its first rate sample after the duration; samples are a second apart
 * by default, so shorter runs sample more often to end on time.
 */
function sampleIntervalMs(seconds: number): number {
  return seconds < 2 ? 250 : 1000;
}

export class BenchContext {
  readonly notes: string[] = [];
  private readonly servers: TestServer[] = [];
  private readonly children: ChildProcess[] = [];
  private readonly dirs: string[] = [];

  constructor(
    readonly options: BenchOptions,
    readonly progress: Progress,
  ) {}

  get remote(): boolean {
    return this.options.url !== undefined;
  }

  /** Seconds of a measured run: --duration, else the scenario's default (half a second with --quick). */
  seconds(byDefault: number): number {
    if (this.options.duration !== undefined) return this.options.duration;
    return this.options.quick ? QUICK_SECONDS : byDefault;
  }

  /** Seconds of a warm-up run (none with --quick). */
  warmup(byDefault: number): number {
    return this.options.quick ? 0 : byDefault;
  }

  connections(byDefault: number): number {
    return this.options.connections ?? byDefault;
  }

  rounds(byDefault = 3): number {
    if (this.options.rounds !== undefined) return this.options.rounds;
    return this.options.quick ? 1 : byDefault;
  }

  /** The size of a data set: `full` normally, `quick` with --quick. */
  size(full: number, quick: number): number {
    return this.options.quick ? quick : full;
  }

  tempDir(prefix: string): string {
    const dir = tempDataDir(prefix);
    this.dirs.push(dir);
    return dir;
  }

  /** A perch server on a free loopback port over `dataDir`, with --threads HTTP threads; logs only warnings. */
  async startPerch(dataDir: string, config: Record<string, unknown> = {}, threads = this.options.threads): Promise<PerchTarget> {
    const server = await startServer({ dataDir, threads, config: { log: { level: 'warn' }, ...config } });
    this.servers.push(server);
    return { url: server.url, pid: server.proc.pid, server };
  }

  /** Stops a server this tool started (SIGTERM, a clean shutdown); its data directory stays until cleanup. */
  async stopPerch(target: PerchTarget): Promise<void> {
    if (target.server) await target.server.stop('SIGTERM');
  }

  /** The running server of --url, and its process when it listens on this machine. */
  remoteTarget(): PerchTarget {
    const url = new URL(this.options.url!);
    const local = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
    const pid = local ? pidListeningOn(Number(url.port || 80)) : undefined;
    if (pid === undefined) this.notes.push('the server of --url was not found among this machine\'s processes: no memory figures');
    return { url: url.origin, pid };
  }

  /** Ends the scenario as skipped, saying why. */
  skip(reason: string): never {
    throw new SkipScenario(reason);
  }

  /** An API key given with --key, or a skip saying the scenario needs one. */
  remoteKeys(what: string): string[] {
    if (this.options.keys.length === 0) throw new SkipScenario(`needs --key (an API key of that server) to ${what}`);
    return this.options.keys;
  }

  /** A bare uWS baseline (bare-uws.ts) in a process of its own, with these arguments. */
  startBare(args: string[]): Promise<{ url: string; proc: ChildProcess }> {
    const proc = spawn(process.execPath, [join(__dirname, 'bare-uws.js'), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    this.children.push(proc);
    return new Promise((resolve, reject) => {
      proc.stdout!.once('data', (d: Buffer) => resolve({ proc, url: `http://127.0.0.1:${d.toString().trim()}` }));
      proc.once('exit', (code) => reject(new Error(`bare server ${args[0]} exited with ${code}`)));
    });
  }

  /** A child process of this tool's, stopped at cleanup if it is still running. */
  adopt(proc: ChildProcess): ChildProcess {
    this.children.push(proc);
    return proc;
  }

  /** Watches the memory of the target's process from now on (nothing when it is not visible). */
  watchMemory(target: PerchTarget): MemoryWatcher | undefined {
    if (target.pid === undefined) return undefined;
    return new MemoryWatcher(target.pid, target.server !== undefined).start();
  }

  /** One autocannon run with its live line; `expected` is the class of answer that counts as served. */
  async load(label: string, opts: LoadOptions, expected: '2xx' | '3xx' = '2xx'): Promise<LoadSummary> {
    const seconds = opts.duration ?? 10;
    return this.progress.timed(
      label,
      seconds,
      async (report) => {
        const run = autocannon({ pipelining: 1, sampleInt: sampleIntervalMs(seconds), ...opts, duration: seconds });
        run.on('tick', (t) => report(`${t.counter.toLocaleString('en-US')} req/s`));
        return summarize(await run);
      },
      (s) => {
        const bad = failures(s, expected);
        return `${fmtInt(s.rps)} req/s, p50 ${s.p50_ms} ms, p99 ${s.p99_ms} ms${bad ? `, ${fmtInt(bad)} not ${expected}` : ''}`;
      },
    );
  }

  /** A load run without a line of its own: one that runs beside another, whose line shows. */
  async loadQuietly(opts: LoadOptions): Promise<LoadSummary> {
    const seconds = opts.duration ?? 10;
    return summarize(await autocannon({ pipelining: 1, sampleInt: sampleIntervalMs(seconds), ...opts, duration: seconds }));
  }

  /**
   * Rounds of baseline, perch, baseline with the same load settings, after a warm-up of each
   * side: the baseline of a round is the mean of its two runs, so a change in the machine's load
   * during the round moves both sides of its ratio alike. Returns every round and the median one.
   */
  async interleaved(
    name: string,
    bare: LoadOptions,
    perch: LoadOptions,
    settings: { seconds: number; rounds: number; warmup: number; expected?: '2xx' | '3xx'; pids?: { perch?: number; baseline?: number } },
  ): Promise<Comparison> {
    const { seconds, rounds, warmup, expected, pids } = settings;
    const warmups: Comparison['warmups'] = {};
    if (warmup > 0) {
      warmups.baseline = await this.load(`${name} warm-up, baseline`, { ...bare, duration: warmup }, expected);
      warmups.perch = await this.load(`${name} warm-up, perch`, { ...perch, duration: warmup }, expected);
    } else if (this.options.quick) {
      const counted = (opts: LoadOptions): LoadOptions => ({ ...opts, duration: seconds, amount: (opts.connections ?? DEFAULT_CONNECTIONS) * QUICK_WARMUP_ANSWERS_PER_CONNECTION });
      warmups.baseline = await this.load(`${name} warm-up, baseline`, counted(bare), expected);
      warmups.perch = await this.load(`${name} warm-up, perch`, counted(perch), expected);
    }
    const run = (opts: LoadOptions): LoadOptions => ({ ...opts, duration: seconds });
    const all: Round[] = [];
    for (let r = 1; r <= rounds; r++) {
      const before = await withCpu(pids?.baseline, () => this.load(`${name} round ${r}/${rounds}, baseline`, run(bare), expected));
      const p = await withCpu(pids?.perch, () => this.load(`${name} round ${r}/${rounds}, perch`, run(perch), expected));
      const after = await withCpu(pids?.baseline, () => this.load(`${name} round ${r}/${rounds}, baseline`, run(bare), expected));
      const baselineRps = (before.result.rps + after.result.rps) / 2;
      const ratio = p.result.rps / baselineRps;
      const cpu = cpuPerRequestUs(p.cpuSeconds, p.result.requests);
      all.push({
        baseline: [before.result, after.result],
        perch: p.result,
        baseline_rps: baselineRps,
        ratio,
        perch_cpu_us: cpu,
        baseline_cpu_us: cpuPerRequestUs(sumCpu(before, after), before.result.requests + after.result.requests),
      });
      this.progress.line(`  ${name} round ${r}/${rounds}: ratio ${ratio > 0 ? ratio.toFixed(3) : '0'}${cpu === undefined ? '' : `, perch ${cpu} us of CPU a request`}`);
    }
    return { rounds: all, median: medianBy(all, (x) => x.ratio), warmups };
  }

  /** Stops every server and process this scenario started and removes its directories. */
  async cleanup(): Promise<void> {
    for (const proc of this.children) if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    await Promise.all(this.servers.map((s) => s.stop('SIGTERM')));
    for (const dir of this.dirs) rmSync(dir, { recursive: true, force: true });
  }
}

/** The figures every comparison reports: the median round's rates and ratio, and every round's ratio. */
export function comparisonFigures(result: Comparison, expected: '2xx' | '3xx' = '2xx'): Record<string, unknown> {
  const { median } = result;
  return {
    rounds: result.rounds.length,
    round_ratios: result.rounds.map((r) => round3(r.ratio)),
    baseline_rps: Math.round(median.baseline_rps),
    baseline_runs_rps: median.baseline.map((b) => Math.round(b.rps)),
    perch_rps: Math.round(median.perch.rps),
    ratio: round3(median.ratio),
    perch_p50_ms: median.perch.p50_ms,
    perch_p99_ms: median.perch.p99_ms,
    baseline_p99_ms: Math.max(...median.baseline.map((b) => b.p99_ms)),
    perch_failures: result.rounds.reduce((n, r) => n + failures(r.perch, expected), 0),
    ...cpuFigures(result.rounds),
  };
}

/**
 * CPU per request of each side (bench/cpu.ts), the median over the rounds, when /proc showed the
 * processes: what each server spent, apart from how fast the load generator drove it.
 */
function cpuFigures(rounds: Round[]): Record<string, unknown> {
  const perch = rounds.map((r) => r.perch_cpu_us).filter((x): x is number => x !== undefined);
  return {
    ...medianDefined('perch_cpu_us_per_request', perch),
    ...(perch.length > 0 ? { round_perch_cpu_us: perch } : {}),
    ...medianDefined('baseline_cpu_us_per_request', rounds.map((r) => r.baseline_cpu_us)),
  };
}

/** A table row of a comparison's median round. */
export function comparisonRow(measure: string, result: Comparison, goal: Goal | undefined, memory: MemoryPeak | undefined, expected: '2xx' | '3xx' = '2xx'): Row {
  const { median } = result;
  return {
    measure,
    rps: median.perch.rps,
    p50_ms: median.perch.p50_ms,
    p99_ms: median.perch.p99_ms,
    errors: result.rounds.reduce((n, r) => n + failures(r.perch, expected), 0),
    baseline_rps: median.baseline_rps,
    ratio: median.ratio,
    goal,
    memory,
  };
}


/**
 * Requests perch may have received but not answered when a load stopped: autocannon closes its
 * connections at the end of a run, one request in flight on each at most, and the server still
 * carries out what it received.
 */
export function inFlightAtStops(result: Comparison, connections: number): number {
  return connections * (result.rounds.length + (result.warmups.perch ? 1 : 0));
}

/**
 * Every write answered 201 is stored: the store holds at least the 201s (one sampled before the
 * load included), and no more than the 201s plus the requests still in flight when a run stopped.
 */
export function storedCheck(what: string, answered: number, stored: number, inFlight: number): AuditCheck {
  return {
    check: `every 201 is a stored ${what}`,
    ok: stored >= answered && stored - answered <= inFlight,
    figures: { answered_201: answered, stored, in_flight_at_stops_at_most: inFlight },
  };
}

/** A goal of "at least `min`" judged on `value`. */
export function atLeast(min: number, value: number | undefined, text = `≥ ${min}`): Goal {
  return { text, met: value === undefined || Number.isNaN(value) ? undefined : value >= min };
}

/** A goal of "at most `max`" (or "below", strictly) judged on `value`. */
export function atMost(max: number, value: number | undefined, text: string, strictly = false): Goal {
  return { text, met: value === undefined || Number.isNaN(value) ? undefined : strictly ? value < max : value <= max };
}

export function round3(x: number): number {
  return Number(x.toFixed(3));
}

export function round1(x: number): number {
  return Number(x.toFixed(1));
}

export function fmtInt(x: number): string {
  return Math.round(x).toLocaleString('en-US');
}
