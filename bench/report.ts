// What `perch bench` prints on stdout: the list of scenarios, each audit's checks, and at the end
// one table of every scenario's figures.
import type { AuditCheck, Row } from './context';
import { SCENARIOS } from './scenarios';
import type { MachineShares } from './cpu';

/** One scenario's outcome, as printed and as written to --json. */
export interface ScenarioEntry {
  scenario: string;
  status: 'measured' | 'skipped' | 'failed';
  /** Why it was skipped, or what failed. */
  reason?: string;
  rows: Row[];
  notes: string[];
  audit?: AuditCheck[];
  load_average_before: number[];
  load_average_after: number[];
  /** The machine's busy, idle and stolen cores over the scenario. */
  machine?: MachineShares;
}

/** The memory goals shown beside the redirect row (issue-level goals for the redirect benchmark). */
export interface MemoryGoals {
  rss_mib: number;
  anon_mib: number;
}

export function formatListing(): string {
  const lines = ['perch bench [scenario…] [--duration S] [--connections N] [--threads N] [--rounds N] [--url URL] [--key KEY] [--json FILE] [--quick]', ''];
  const rows = SCENARIOS.map((s) => [s.name, s.goal, s.about]);
  lines.push(...table(['scenario', 'goal', 'what it measures'], rows));
  lines.push('', 'Each figure is a ratio to a baseline measured in the same run (bench/README.md).');
  return lines.join('\n') + '\n';
}

function fmtNumber(x: number | undefined, digits: number): string {
  if (x === undefined || Number.isNaN(x)) return '';
  return x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function fmtMs(x: number | undefined): string {
  if (x === undefined || Number.isNaN(x)) return '';
  if (x < 1) return fmtNumber(x, 3);
  if (x < 100) return fmtNumber(x, 1);
  return fmtNumber(x, 0);
}

function mark(met: boolean | undefined): string {
  return met === undefined ? '' : met ? ' ✓' : ' ✗';
}

export function formatTable(entries: ScenarioEntry[], memoryGoals: Record<string, MemoryGoals>): string {
  const rows: string[][] = [];
  for (const e of entries) {
    if (e.status !== 'measured') {
      rows.push([e.scenario, `${e.status}: ${e.reason ?? ''}`, '', '', '', '', '', '', '', '', '', '']);
      continue;
    }
    e.rows.forEach((r, i) => {
      const goals = i === 0 ? memoryGoals[e.scenario] : undefined;
      rows.push([
        i === 0 ? e.scenario : '',
        r.measure,
        fmtNumber(r.rps, 0),
        fmtMs(r.p50_ms),
        fmtMs(r.p99_ms),
        r.errors === undefined ? '' : String(r.errors),
        fmtNumber(r.baseline_rps, 0),
        r.ratio !== undefined ? fmtNumber(r.ratio, 3) : (r.value ?? ''),
        r.goal?.text ?? '',
        r.goal?.met === undefined ? '' : r.goal.met ? 'met' : 'not met',
        r.memory ? fmtNumber(r.memory.peak_rss_mib, 1) + (goals ? mark(r.memory.peak_rss_mib <= goals.rss_mib) : '') : '',
        r.memory ? fmtNumber(r.memory.peak_anon_mib, 1) + (goals ? mark(r.memory.peak_anon_mib <= goals.anon_mib) : '') : '',
      ]);
    });
  }
  const lines = table(['scenario', 'measure', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'baseline req/s', 'ratio', 'goal', 'met', 'peak RSS MiB', 'peak anon MiB'], rows);
  for (const [scenario, g] of Object.entries(memoryGoals)) {
    if (entries.some((e) => e.scenario === scenario && e.status === 'measured')) {
      lines.push(`Memory goals under ${scenario}: peak RSS ≤ ${g.rss_mib} MiB, peak anonymous ≤ ${g.anon_mib} MiB (✓ met, ✗ not met).`);
    }
  }
  for (const e of entries) {
    for (const note of e.notes) lines.push(`${e.scenario}: ${note}`);
    const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
    if (e.status !== 'measured') continue;
    // Steal is what a shared virtual machine was not there for: a run with much of it is a draw
    // from a slower machine, whatever its ratios say.
    const m = e.machine ? `; the machine's cores busy ${e.machine.busy_cores.toFixed(2)}, idle ${e.machine.idle_cores.toFixed(2)}, stolen by the hypervisor ${e.machine.steal_cores.toFixed(2)}` : '';
    lines.push(`${e.scenario}: load average ${load(e.load_average_before)} before, ${load(e.load_average_after)} after${m}`);
  }
  return lines.join('\n') + '\n';
}

export function formatAudit(scenario: string, checks: AuditCheck[]): string {
  const failed = checks.filter((c) => !c.ok).length;
  const lines = [`${scenario} audit:`];
  for (const c of checks) lines.push(`  ${c.ok ? 'ok  ' : 'FAIL'} ${c.check}: ${describe(c.figures)}`);
  lines.push(failed === 0 ? `${scenario} audit passed (${checks.length} check${checks.length === 1 ? '' : 's'})` : `${scenario} audit FAILED: ${failed} of ${checks.length} checks`);
  return lines.join('\n') + '\n';
}

function describe(figures: Record<string, unknown>): string {
  return Object.entries(figures)
    .map(([k, v]) => `${k} ${typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`)
    .join(', ');
}

/** Left-aligned text columns, numbers right-aligned, separated by two spaces. */
function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const numeric = header.map((_, i) => rows.length > 0 && rows.every((r) => /^[\d,.\s✓✗-]*$/.test(r[i] ?? '')));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
}
