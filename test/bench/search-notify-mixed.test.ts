// perch bench keeps working: the limiter, search, suggestion, notification and mixed scenarios,
// each for about a second with small data sets (--quick). Checks that each ran, produced its
// table and its figures, and that the mixed audit ran all its checks and passed; never how fast
// anything was.
import t from 'tap';
import { TABLE_HEADER, runBench } from '../helpers/bench';

const SCENARIOS = ['limiter', 'search', 'suggest', 'notify-ws', 'mixed'];

t.test('the other scenarios run, print their table and write their figures; the mixed audit passes', async (t) => {
  const run = await runBench([...SCENARIOS, '--quick'], 170_000);
  t.equal(run.code, 0, `exits 0: ${run.stderr.slice(-2000)}`);
  t.match(run.stdout, TABLE_HEADER, 'prints the table');
  t.same(run.entries.map((e) => e.scenario), SCENARIOS, 'one JSON object per scenario, in order');
  const by = Object.fromEntries(run.entries.map((e) => [e.scenario, e]));
  for (const name of SCENARIOS) {
    t.equal(by[name].status, 'measured', `${name} was measured`);
    t.match(run.stdout, new RegExp(`^${name}\\s`, 'm'), `${name} has a line in the table`);
  }
  t.type(by.limiter.figures.ratio, 'number', 'limiter has its ratio');
  t.type(by.search.figures.recent_to_timeline, 'number', 'search: the plain tier against timeline reads');
  t.type(by.search.figures.relevance_to_timeline, 'number', 'search: the relevance tier against timeline reads');
  t.equal(by.search.figures.indexing.default_queue.indexed_posts, by.search.figures.indexing.posts, 'search: every post indexed');
  t.type(by.suggest.figures.http_p50_ratio, 'number', 'suggest has its p50 ratio');
  const ws = by['notify-ws'].figures;
  t.type(ws.p99_ms, 'number', 'notify-ws has its p99');
  t.equal(ws.missing, 0, 'notify-ws: every like reached its socket');

  const mixed = by.mixed;
  t.type(mixed.figures.ratio, 'number', 'mixed has its ratio to the same mix against bare uWS');
  t.ok(mixed.figures.requests > 0, 'mixed sent traffic');
  t.same(Object.keys(mixed.figures.by_kind).sort(), ['follow', 'like', 'post', 'redirect', 'search', 'shorten', 'suggest', 'timeline'], 'mixed reports every kind of request');
  t.type(mixed.rows[0].memory?.peak_rss_mib, 'number', 'mixed reports the peak RSS');
  const checks = (mixed.audit as Array<{ check: string; ok: boolean }>).map((c) => c.check);
  for (const part of [/queue drained/, /search index/, /link created resolves/, /post that got a 201 exists/, /clicks recorded equal the 302s/, /notification owed was stored/, /delivered to it/, /no 5xx/, /answer it should/]) {
    t.ok(checks.some((c) => part.test(c)), `the audit checks ${part.source}`);
  }
  t.equal(mixed.audit_passed, true, `the mixed audit passed: ${JSON.stringify(mixed.audit.filter((c: { ok: boolean }) => !c.ok))}`);
  t.match(run.stdout, /^mixed audit passed \(9 checks\)$/m, 'the audit printed its verdict');
});
