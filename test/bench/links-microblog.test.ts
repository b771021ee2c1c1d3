// perch bench keeps working: the link and microblog scenarios, each for about a second with small
// data sets (--quick). Checks that each ran, produced its table and its figures, and that its
// audit passed; never how fast anything was.
import t from 'tap';
import { TABLE_HEADER, runBench } from '../helpers/bench';

const SCENARIOS = ['redirect', 'shorten', 'posts', 'timeline', 'readwrite', 'fanout'];

t.test('the link and microblog scenarios run, print their table and write their figures', async (t) => {
  const run = await runBench([...SCENARIOS, '--quick'], 170_000);
  t.equal(run.code, 0, `exits 0: ${run.stderr.slice(-2000)}`);
  t.match(run.stdout, TABLE_HEADER, 'prints the table');
  t.same(run.entries.map((e) => e.scenario), SCENARIOS, 'one JSON object per scenario, in order');
  const by = Object.fromEntries(run.entries.map((e) => [e.scenario, e]));
  for (const name of SCENARIOS) {
    const e = by[name];
    t.equal(e.status, 'measured', `${name} was measured`);
    t.ok(e.rows.length >= 1, `${name} has a row`);
    t.match(run.stdout, new RegExp(`^${name}\\s`, 'm'), `${name} has a line in the table`);
    t.type(e.rows[0].memory?.peak_rss_mib, 'number', `${name} reports the perch process's peak RSS`);
    t.type(e.rows[0].memory?.peak_anon_mib, 'number', `${name} reports its peak anonymous RSS`);
    t.equal(e.machine.load_average_before.length, 3, `${name} notes the load average`);
    t.ok(e.machine.busy_cores > 0 && e.machine.busy_cores <= e.machine.cpus + 0.1 && e.machine.steal_cores >= 0 && e.machine.idle_cores >= 0, `${name} notes the machine's busy, idle and stolen cores`);
    t.match(run.stdout, new RegExp(`^${name}: load average .* stolen by the hypervisor \\d+\\.\\d\\d$`, 'm'), `${name}'s line under the table gives them`);
  }
  for (const name of ['redirect', 'shorten', 'posts', 'timeline']) {
    const f = by[name].figures;
    t.type(f.ratio, 'number', `${name} has a ratio`);
    t.ok(f.baseline_rps > 0 && f.perch_rps > 0, `${name} measured both sides`);
    t.equal(f.round_ratios.length, 1, `${name} ran one round`);
    t.ok(f.perch_cpu_us_per_request > 0 && f.baseline_cpu_us_per_request > 0, `${name} measured each side's CPU per request`);
  }
  t.type(by.redirect.figures.beside_posts.ratio, 'number', 'redirect measured the redirects beside posts');
  t.equal(by.redirect.figures.nothing_lost, true, 'redirect: every 302 became a recorded click');
  t.same(by.redirect.figures.memory_goals, { peak_rss_mib: 160, peak_anon_mib: 128, peak_rss_met: by.redirect.figures.memory_goals.peak_rss_met, peak_anon_met: by.redirect.figures.memory_goals.peak_anon_met }, 'redirect states its memory goals');
  for (const name of ['redirect', 'shorten', 'posts']) t.equal(by[name].audit_passed, true, `${name}'s audit passed`);
  t.type(by.posts.figures.minimal_group_commit_rps, 'number', 'posts measured the minimal group commit');
  t.type(by.readwrite.figures.combined, 'number', 'readwrite has its combined fraction');
  t.type(by.readwrite.figures.reads_beside_fixed_posts_ratio, 'number', 'readwrite has reads beside a fixed post rate');
  t.ok(by.readwrite.figures.reads_alone_around_fixed_rps > 0, 'readwrite measured reads alone around the fixed post rate');
  const rw = by.readwrite.figures;
  t.ok(rw.reads_alone_cpu_us > 0 && rw.posts_alone_cpu_us > 0, 'readwrite measured the server\'s CPU per read and per post alone');
  t.ok(rw.beside_cpu_over_parts > 0, 'readwrite compared the CPU of both loads at once with their parts alone');
  t.equal(rw.fixed_posts_rps > 0 && rw.fixed_post_generator_cpu_s > 0, true, 'readwrite ran the fixed post rate and says what its generator took');
  t.ok(rw.reads_beside_bare_posts_ratio > 0 && rw.reads_beside_bare_posts_rps > 0, 'readwrite measured reads beside the same posts answered by a bare server');
  t.equal(rw.round_bare_posts_ratios.length, rw.rounds, 'a reference ratio for every round');
  t.ok(rw.bare_posts_server_cpu_s > 0, 'readwrite says what the bare server took meanwhile');
  t.equal(rw.unsettled_reads_alone, 0, "every reads-alone run started once the server's queues had drained");
  t.type(by.fanout.figures.median_ms, 'number', 'fanout has its median time');
});
