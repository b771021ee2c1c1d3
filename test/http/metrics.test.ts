import t from 'tap';
import { createThreadMetrics } from '../../src/http/metrics';
import { aggregateMetrics } from '../../src/server/figures';

t.test('request counts and durations are summed over threads in the exposition format', async (t) => {
  const a = createThreadMetrics();
  const b = createThreadMetrics();
  a.observe('/api/posts', 'POST', 201, 0.0003);
  a.observe('/api/posts', 'POST', 201, 0.002);
  a.observe('/api/posts', 'POST', 400, 0.00005);
  b.observe('/api/posts', 'POST', 201, 7);
  b.observe('/api/posts', 'POST', 201, 0.001);
  a.rateLimitRejected('redirect');
  const text = await aggregateMetrics([a.json(), b.json()]);
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

t.test("a thread's own counters and gauges are summed over threads; none before they are made", async (t) => {
  const a = createThreadMetrics();
  const b = createThreadMetrics();
  const before = await aggregateMetrics([a.json(), b.json()]);
  t.notMatch(before, /perch_ws_/, 'no figure before a capability makes it');
  t.match(before, /^# TYPE perch_rate_limit_rejections_total counter$/m, 'the rejections counter is there with no series');
  t.notMatch(before, /^perch_rate_limit_rejections_total/m);
  const sent = [a.counter('perch_ws_messages_sent_total', 'Messages sent.'), b.counter('perch_ws_messages_sent_total', 'Messages sent.')];
  const open = [a.gauge('perch_ws_open_sockets', 'Sockets open.'), b.gauge('perch_ws_open_sockets', 'Sockets open.')];
  sent[0].inc();
  sent[0].inc();
  sent[1].inc();
  open[0].set(5);
  open[1].set(2);
  open[1].set(3);
  const text = await aggregateMetrics([a.json(), b.json()]);
  t.match(text, /^# TYPE perch_ws_messages_sent_total counter\nperch_ws_messages_sent_total 3$/m);
  t.match(text, /^# TYPE perch_ws_open_sockets gauge\nperch_ws_open_sockets 8$/m, "a gauge: each thread's last value, summed");
});
