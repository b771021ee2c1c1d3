import t from 'tap';
import { aggregateMetrics, createThreadMetrics } from '../../src/http/metrics';

t.test('request counts and durations are summed over threads in the exposition format', async (t) => {
  const a = createThreadMetrics();
  const b = createThreadMetrics();
  a.observe('/api/posts', 'POST', 201, 0.0003);
  a.observe('/api/posts', 'POST', 201, 0.002);
  a.observe('/api/posts', 'POST', 400, 0.00005);
  b.observe('/api/posts', 'POST', 201, 7);
  b.observe('/api/posts', 'POST', 201, 0.001);
  a.rateLimitRejected('redirect');
  const text = await aggregateMetrics([await a.registry.getMetricsAsJSON(), await b.registry.getMetricsAsJSON()]);
  const value = (series: string) => {
    const line = text.split('\n').find((l) => l.startsWith(series + ' '));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };
  const labels = 'route="/api/posts",method="POST",status="201"';
  t.equal(value(`perch_http_requests_total{${labels}}`), 4);
  t.equal(value(`perch_http_requests_total{route="/api/posts",method="POST",status="400"}`), 1);
  // Cumulative buckets; a bound counts the durations at or below it.
  t.equal(value(`perch_http_request_duration_seconds_bucket{le="0.00025",${labels}}`), 0);
  t.equal(value(`perch_http_request_duration_seconds_bucket{le="0.0005",${labels}}`), 1);
  t.equal(value(`perch_http_request_duration_seconds_bucket{le="0.001",${labels}}`), 2);
  t.equal(value(`perch_http_request_duration_seconds_bucket{le="0.0025",${labels}}`), 3);
  t.equal(value(`perch_http_request_duration_seconds_bucket{le="5",${labels}}`), 3);
  t.equal(value(`perch_http_request_duration_seconds_bucket{le="+Inf",${labels}}`), 4);
  t.equal(value(`perch_http_request_duration_seconds_count{${labels}}`), 4);
  t.ok(Math.abs(value(`perch_http_request_duration_seconds_sum{${labels}}`)! - 7.0033) < 1e-9);
  t.equal(value('perch_rate_limit_rejections_total{limit="redirect"}'), 1);
  t.match(text, /# TYPE perch_http_request_duration_seconds histogram/);
  t.match(text, /# TYPE perch_http_requests_total counter/);
});
