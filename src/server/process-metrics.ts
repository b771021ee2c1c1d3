// The supervisor's own metrics beside each capability's gauges: Node.js and process metrics, the
// build, and the writer's group commits.
import { Gauge, collectDefaultMetrics, type Registry } from 'prom-client';
import { VERSION } from '../version';
import { registryFigures } from './figures';

/** How often the event loop's lag is sampled. */
const EVENT_LOOP_SAMPLE_MS = 100;

/**
 * prom-client's default metrics, collected once, on the main thread: the process metrics (CPU,
 * resident memory, open file descriptors, start time) cover the whole process, threads included;
 * the Node.js ones (heap, event-loop lag, GC) are the supervisor's. Collected in every HTTP thread
 * too, the process figures would be summed once per thread into nonsense.
 */
export function processMetrics(registry: Registry): void {
  // The event-loop lag is sampled by a timer: prom-client's default of every 10 ms would wake an
  // idle server a hundred times a second for this metric alone. Ten samples a second still show
  // a stalled loop (docs/api.md).
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  // The aggregator that sums the threads' registries leaves out metrics marked `omit` (meant for a
  // cluster of processes); here one registry has them, so they are shown as they are.
  for (const m of registry.getMetricsAsArray()) {
    const metric = m as unknown as { aggregator?: string };
    if (metric.aggregator === 'omit') metric.aggregator = 'first';
  }
  new Gauge({
    name: 'perch_build_info',
    help: 'The running perch: always 1, its version in the label.',
    labelNames: ['version'] as const,
    registers: [registry],
  }).set({ version: VERSION }, 1);
}

/**
 * The writer's running totals (writer/writer.ts keeps them in shared memory) as counters: they
 * only rise, so rate() and increase() apply.
 */
export function groupCommitMetrics(registry: Registry, stats: Float64Array): void {
  const figures = registryFigures(registry);
  const total = (name: string, help: string, slot: number) => figures.total(name, help, () => stats[slot]);
  total('perch_group_commits_total', 'Group transactions committed by the writer since start that carried requested writes.', 0);
  total('perch_group_commit_writes_total', 'Requested writes committed by the writer since start (divided by perch_group_commits_total: the mean batch).', 1);
  total('perch_writes_disk_full_total', 'Writes answered 503 because the disk was full (nothing of them was committed).', 2);
}
