// Per-thread Prometheus metrics. Each HTTP thread counts into its own registry; GET /metrics asks
// the supervisor, which collects every thread's registry as JSON and sums them, so the answer
// covers the whole server whichever thread serves it.
import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';

export interface ThreadMetrics {
  registry: Registry;
  observe(route: string, method: string, status: number, seconds: number): void;
  rateLimitRejected(limit: string): void;
}

export function createThreadMetrics(): ThreadMetrics {
  const registry = new Registry();
  const requests = new Counter({
    name: 'perch_http_requests_total',
    help: 'HTTP requests answered, by route, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'perch_http_request_duration_seconds',
    help: 'Time from request to response, by route, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const rejections = new Counter({
    name: 'perch_rate_limit_rejections_total',
    help: 'Requests rejected with 429, by the limit that was exhausted.',
    labelNames: ['limit'] as const,
    registers: [registry],
  });
  // Children are cached by their label tuple: looking a child up by a label object hashes it on
  // every request, a string key does not.
  const children = new Map<string, { c: Counter.Internal; h: Histogram.Internal<'route' | 'method' | 'status'> }>();
  return {
    registry,
    observe(route, method, status, seconds) {
      const key = route + ' ' + method + ' ' + status;
      let child = children.get(key);
      if (!child) {
        const labels = { route, method, status: String(status) };
        child = { c: requests.labels(labels), h: duration.labels(labels) };
        children.set(key, child);
      }
      child.c.inc();
      child.h.observe(seconds);
    },
    rateLimitRejected(limit) {
      rejections.inc({ limit });
    },
  };
}

export type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/** Sums the registries of every thread (and the supervisor's own) into one exposition text. */
export async function aggregateMetrics(parts: MetricsJson[]): Promise<string> {
  const merged = AggregatorRegistry.aggregate(parts as Parameters<typeof AggregatorRegistry.aggregate>[0]);
  return merged.metrics();
}
