// `perch bench`: runs the named scenarios one after another, each on servers of its own, shows
// progress on stderr, prints each audit and then one table on stdout, and writes every figure to
// --json. The exit code is 1 when a scenario failed or an audit check did not pass.
import { constants, cpus, loadavg } from 'node:os';
import { writeFileSync } from 'node:fs';
import { BenchContext, SkipScenario, round3, type BenchOptions, type Row } from './context';
import { Progress } from './progress';
import { PEAK_ANON_GOAL_MIB, PEAK_RSS_GOAL_MIB } from './redirect';
import { formatAudit, formatListing, formatTable, type ScenarioEntry } from './report';
import { SCENARIOS, scenarioNamed } from './scenarios';
import { SERVE_ENVIRONMENT } from '../src/server/node-flags';
import { machineShares, machineTimes } from './cpu';

export interface RunOptions extends BenchOptions {
  /** A file to write every figure to, as a JSON array of one object per scenario. */
  json?: string;
}

export { formatListing, SCENARIOS };

/** Rounds a row's figures for the JSON file (the table formats its own). */
function jsonRow(r: Row): Record<string, unknown> {
  const n = (x: number | undefined, digits: number) => (x === undefined || Number.isNaN(x) ? undefined : Number(x.toFixed(digits)));
  return { ...r, rps: n(r.rps, 0), baseline_rps: n(r.baseline_rps, 0), ratio: r.ratio === undefined ? undefined : round3(r.ratio), p50_ms: n(r.p50_ms, 3), p99_ms: n(r.p99_ms, 3) };
}

/**
 * Until `stop` is called, a SIGINT or SIGTERM stops the servers and processes of the scenario
 * running (`current()`), removes its directories, and ends this process with 128 + the signal's
 * number. Without it the signal ended this process alone, and the baselines and load processes it
 * had started went on running, with their ports and their CPU (a Ctrl-C reaches them too, a
 * SIGTERM sent to this process does not).
 */
function stopOnSignals(progress: Progress, current: () => BenchContext | null): { stop(): void } {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    progress.line(`  ${signal}: stopping the servers this run started`);
    const ctx = current();
    void (ctx ? ctx.cleanup() : Promise.resolve()).finally(() => process.exit(128 + constants.signals[signal]));
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];
  for (const s of signals) process.on(s, onSignal);
  return { stop: () => signals.forEach((s) => process.off(s, onSignal)) };
}

export async function runBench(names: string[], options: RunOptions, out: NodeJS.WritableStream = process.stdout): Promise<number> {
  const progress = new Progress();
  const entries: ScenarioEntry[] = [];
  const json: Array<Record<string, unknown>> = [];
  let failed = false;
  let running: BenchContext | null = null;
  const signals = stopOnSignals(progress, () => running);
  for (const name of names) {
    const scenario = scenarioNamed(name)!;
    progress.line(`== ${name}: ${scenario.about}`);
    const ctx = new BenchContext(options, progress);
    running = ctx;
    const before = loadavg();
    const timesBefore = machineTimes();
    const started = performance.now();
    const entry: ScenarioEntry = { scenario: name, status: 'measured', rows: [], notes: ctx.notes, load_average_before: before, load_average_after: [] };
    let figures: Record<string, unknown> = {};
    try {
      const result = await scenario.run(ctx);
      entry.rows = result.rows;
      entry.notes.push(...(result.notes ?? []));
      entry.audit = result.audit;
      figures = result.figures;
    } catch (err) {
      if (err instanceof SkipScenario) {
        entry.status = 'skipped';
        entry.reason = err.message;
        progress.line(`  skipped: ${err.message}`);
      } else {
        entry.status = 'failed';
        entry.reason = (err as Error).message.split('\n')[0];
        failed = true;
        progress.line(`  failed: ${(err as Error).stack}`);
      }
    } finally {
      await ctx.cleanup();
      running = null;
    }
    entry.load_average_after = loadavg();
    const timesAfter = machineTimes();
    const seconds = (performance.now() - started) / 1000;
    entry.machine = machineShares(timesBefore, timesAfter, seconds);
    if (entry.audit) {
      out.write(formatAudit(name, entry.audit));
      if (entry.audit.some((c) => !c.ok)) failed = true;
    }
    entries.push(entry);
    json.push({
      scenario: name,
      about: scenario.about,
      goal: scenario.goal,
      status: entry.status,
      ...(entry.reason ? { reason: entry.reason } : {}),
      date: new Date().toISOString(),
      settings: {
        duration_s: options.duration ?? null,
        connections: options.connections ?? null,
        rounds: options.rounds ?? null,
        http_threads: options.threads,
        url: options.url ?? null,
        quick: options.quick,
        // The Node.js flags the load generator ran with (src/cli/bench.ts, loadGeneratorFlags).
        load_generator_node_flags: process.execArgv,
        // The environment settings of `perch serve` as the load generator has them (null: unset).
        load_generator_environment: Object.fromEntries(Object.keys(SERVE_ENVIRONMENT).map((name) => [name, process.env[name] ?? null])),
      },
      machine: { cpus: cpus().length, load_average_before: before.map(round3), load_average_after: entry.load_average_after.map(round3), ...entry.machine },
      seconds_taken: Number(seconds.toFixed(1)),
      rows: entry.rows.map(jsonRow),
      figures,
      notes: entry.notes,
      ...(entry.audit ? { audit: entry.audit, audit_passed: entry.audit.every((c) => c.ok) } : {}),
    });
    // Written after each scenario, so that a long run interrupted keeps what it measured.
    if (options.json) writeFileSync(options.json, JSON.stringify(json, null, 2) + '\n');
  }
  out.write('\n' + formatTable(entries, { redirect: { rss_mib: PEAK_RSS_GOAL_MIB, anon_mib: PEAK_ANON_GOAL_MIB } }));
  if (options.quick) out.write('(--quick: a check that the tool works; its figures are not measurements)\n');
  signals.stop();
  return failed ? 1 : 0;
}
