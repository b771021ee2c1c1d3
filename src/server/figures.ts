// The supervisor's figures in /metrics as capabilities declare them: each capability says what
// it measures and how to read it (FigureSet), and this file alone makes prom-client metrics of
// them. So the capability modules do not load the metrics library: every CLI command and the
// writer's thread load those modules, and neither serves /metrics. The HTTP threads' parts are
// summed here too (aggregateMetrics), so an HTTP thread of its own does not load it either.
import { AggregatorRegistry, Counter, Gauge, type Registry } from 'prom-client';
import type { MetricsJson } from '../http/metrics';
import type { FigureSet } from '../capability';

/** A FigureSet that registers each figure in `registry`, read when /metrics is asked for. */
export function registryFigures(registry: Registry): FigureSet {
  return {
    gauge(name, help, read) {
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(read());
        },
      });
    },
    labelledGauge(name, help, label, read) {
      new Gauge({
        name,
        help,
        labelNames: [label],
        registers: [registry],
        collect() {
          for (const [value, n] of read()) this.set({ [label]: value }, n);
        },
      });
    },
    total(name, help, read) {
      new Counter({
        name,
        help,
        registers: [registry],
        collect() {
          this.reset();
          this.inc(read());
        },
      });
    },
    counter(name, help, label, values) {
      const counter = new Counter({ name, help, labelNames: [label], registers: [registry] });
      // Every value shown from the start, at 0: a series that appears only once counted reads as
      // missing data to an alert, not as nothing happened.
      for (const value of values) counter.inc({ [label]: value }, 0);
      return (value) => counter.inc({ [label]: value });
    },
  };
}

/** Sums the metrics of every HTTP thread (and the supervisor's own registry) into one exposition text. */
export async function aggregateMetrics(parts: MetricsJson[]): Promise<string> {
  const merged = AggregatorRegistry.aggregate(parts as unknown as Parameters<typeof AggregatorRegistry.aggregate>[0]);
  return merged.metrics();
}
