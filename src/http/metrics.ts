// Per-thread Prometheus metrics. Each HTTP thread counts into plain numbers of its own and answers a
// collection with them in prom-client's JSON form; GET /metrics asks the supervisor, which collects
// every thread's part and sums them (server/figures.ts, aggregateMetrics), so the answer covers the
// whole server whichever thread serves it. Only the supervisor loads prom-client: an HTTP thread
// of its own would otherwise load it, and the tracing API it pulls in, as it starts.

/** One metric in prom-client's JSON form, as its registries exchange them. */
export interface MetricJson {
  name: string;
  help: string;
  type: string;
  values: Array<{ value: number; labels: Record<string, string | number>; metricName?: string }>;
  aggregator: 'sum';
}

/** A thread's metrics, or the supervisor's own registry's, as collected for one /metrics answer. */
export type MetricsJson = MetricJson[];

export interface ThreadMetrics {
  /** This thread's metrics now. */
  json(): MetricsJson;
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
 * Request counts and durations, kept as plain numbers per series and shown as two metrics (a
 * counter and a histogram). prom-client's children hash their labels again on every observation,
 * a measurable part of a post's time on the HTTP thread; here a request costs a lookup per label
 * and three additions.
 */
class RequestMetrics {
  private readonly series: Series[] = [];
  /**
   * The series by route, method and status, one map per label: a lookup then makes no key (a
   * string built per request was most of what counting one allocated).
   */
  private readonly index = new Map<string, Map<string, Map<number, Series>>>();

  /** The two metrics now. */
  json(): MetricJson[] {
    const name = 'perch_http_request_duration_seconds';
    const durations: MetricJson['values'] = [];
    for (const s of this.series) {
      let cumulative = 0;
      for (let b = 0; b <= DURATION_BUCKETS.length; b++) {
        cumulative += s.buckets[b];
        durations.push({ value: cumulative, labels: { le: b < DURATION_BUCKETS.length ? DURATION_BUCKETS[b] : '+Inf', ...s.labels }, metricName: `${name}_bucket` });
      }
      durations.push({ value: s.sum, labels: { ...s.labels }, metricName: `${name}_sum` });
      durations.push({ value: s.count, labels: { ...s.labels }, metricName: `${name}_count` });
    }
    return [
      {
        name: 'perch_http_requests_total',
        help: 'HTTP requests answered, by route, method and status.',
        type: 'counter',
        values: this.series.map((s) => ({ value: s.count, labels: { ...s.labels } })),
        aggregator: 'sum',
      },
      { name, help: 'Time from request to response, by route, method and status.', type: 'histogram', values: durations, aggregator: 'sum' },
    ];
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
}

/** A metric of one value without labels. */
function single(name: string, help: string, type: 'counter' | 'gauge', value: number): MetricJson {
  return { name, help, type, values: [{ value, labels: {} }], aggregator: 'sum' };
}

export function createThreadMetrics(): ThreadMetrics {
  const requests = new RequestMetrics();
  const rejections = new Map<string, number>();
  const others: Array<() => MetricJson> = [];
  return {
    json: () => [
      ...requests.json(),
      {
        name: 'perch_rate_limit_rejections_total',
        help: 'Requests rejected with 429, by the limit that was exhausted.',
        type: 'counter',
        values: Array.from(rejections, ([limit, value]) => ({ value, labels: { limit } })),
        aggregator: 'sum',
      },
      ...others.map((m) => m()),
    ],
    observe: (route, method, status, seconds) => requests.observe(route, method, status, seconds),
    rateLimitRejected(limit) {
      rejections.set(limit, (rejections.get(limit) ?? 0) + 1);
    },
    counter(name, help) {
      let value = 0;
      others.push(() => single(name, help, 'counter', value));
      return { inc: () => void value++ };
    },
    gauge(name, help) {
      let value = 0;
      others.push(() => single(name, help, 'gauge', value));
      return { set: (v) => void (value = v) };
    },
  };
}
