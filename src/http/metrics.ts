// Per-thread Prometheus metrics. Each HTTP thread counts into its own registry; GET /metrics asks
// the supervisor, which collects every thread's registry as JSON and sums them, so the answer
// covers the whole server whichever thread serves it.
import { AggregatorRegistry, Counter, Gauge, Registry, type Metric } from 'prom-client';

export interface ThreadMetrics {
  registry: Registry;
  observe(route: string, method: string, status: number, seconds: number): void;
  rateLimitRejected(limit: string): void;
  /** A count of this thread's, shown in /metrics summed over the threads. */
  counter(name: string, help: string): { inc(): void };
  /** A value of this thread's, shown in /metrics summed over the threads. */
  gauge(name: string, help: string): { set(value: number): void };
}

const DURATION_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** One route, method and status: its request count and duration histogram. */
interface Series {
  labels: { route: string; method: string; status: string };
  /** Requests per bucket (not cumulative); the last slot is above every bound. */
  buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * Request counts and durations, kept as plain numbers per series and shown to prom-client as two
 * metrics (a counter and a histogram) in its own JSON form. prom-client's children hash their
 * labels again on every observation, a measurable part of a post's time on the HTTP thread; here
 * a request costs a lookup per label and three additions.
 */
class RequestMetrics {
  private readonly series: Series[] = [];
  /**
   * The series by route, method and status, one map per label: a lookup then makes no key (a
   * string built per request was most of what counting one allocated).
   */
  private readonly index = new Map<string, Map<string, Map<number, Series>>>();

  constructor(registry: Registry) {
    registry.registerMetric(this.metric('perch_http_requests_total', 'HTTP requests answered, by route, method and status.', 'counter', () =>
      this.series.map((s) => ({ value: s.count, labels: { ...s.labels } })),
    ));
    const name = 'perch_http_request_duration_seconds';
    registry.registerMetric(this.metric(name, 'Time from request to response, by route, method and status.', 'histogram', () => {
      const values: Array<{ value: number; labels: Record<string, string | number>; metricName: string }> = [];
      for (const s of this.series) {
        let cumulative = 0;
        for (let b = 0; b <= DURATION_BUCKETS.length; b++) {
          cumulative += s.buckets[b];
          values.push({ value: cumulative, labels: { le: b < DURATION_BUCKETS.length ? DURATION_BUCKETS[b] : '+Inf', ...s.labels }, metricName: `${name}_bucket` });
        }
        values.push({ value: s.sum, labels: { ...s.labels }, metricName: `${name}_sum` });
        values.push({ value: s.count, labels: { ...s.labels }, metricName: `${name}_count` });
      }
      return values;
    }));
  }

  observe(route: string, method: string, status: number, seconds: number): void {
    let byMethod = this.index.get(route);
    if (!byMethod) this.index.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let s = byStatus.get(status);
    if (!s) {
      s = { labels: { route, method, status: String(status) }, buckets: new Float64Array(DURATION_BUCKETS.length + 1), sum: 0, count: 0 };
      byStatus.set(status, s);
      this.series.push(s);
    }
    let b = 0;
    while (b < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[b]) b++;
    s.buckets[b]++;
    s.sum += seconds;
    s.count++;
  }

  /** A metric as a Registry takes it: a name, and get() in prom-client's JSON form. */
  private metric(name: string, help: string, type: 'counter' | 'histogram', values: () => unknown[]): Metric {
    return { name, get: async () => ({ name, help, type, values: values(), aggregator: 'sum' }) } as unknown as Metric;
  }
}

export function createThreadMetrics(): ThreadMetrics {
  const registry = new Registry();
  const requests = new RequestMetrics(registry);
  const rejections = new Counter({
    name: 'perch_rate_limit_rejections_total',
    help: 'Requests rejected with 429, by the limit that was exhausted.',
    labelNames: ['limit'] as const,
    registers: [registry],
  });
  return {
    registry,
    observe: (route, method, status, seconds) => requests.observe(route, method, status, seconds),
    rateLimitRejected(limit) {
      rejections.inc({ limit });
    },
    counter: (name, help) => new Counter({ name, help, registers: [registry] }),
    gauge: (name, help) => new Gauge({ name, help, registers: [registry] }),
  };
}

export type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/** Sums the registries of every thread (and the supervisor's own) into one exposition text. */
export async function aggregateMetrics(parts: MetricsJson[]): Promise<string> {
  const merged = AggregatorRegistry.aggregate(parts as Parameters<typeof AggregatorRegistry.aggregate>[0]);
  return merged.metrics();
}
