// The scenarios of `perch bench`, in the order `all` runs them: what each
// measures, its goal, and the function that runs it.
import type { BenchContext, ScenarioResult } from './context';
import { runLimiter } from './limiter';
import { runMixed } from './mixed';
import { runNotifyWs } from './notify-ws';
import { runRedirect } from './redirect';
import { runSearch, runSuggest } from './search';
import { runShorten } from './shorten';
import { runFanout, runPosts, runReadWrite, runTimeline } from './social';

export interface Scenario {
  name: string;
  /** What it measures, against what. */
  about: string;
  goal: string;
  run(ctx: BenchContext): Promise<ScenarioResult>;
}

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'redirect',
    about: 'GET /{code} over 10,000 links vs a bare uWS 302; then beside 2,000 posts/s sent evenly vs alone; every 302 a recorded click',
    goal: 'ratio ≥ 0.85; peak RSS ≤ 160 MiB, anonymous ≤ 128 MiB',
    run: runRedirect,
  },
  { name: 'shorten', about: 'durable POST /api/shorten (limits raised, 64 keys) vs a bare uWS 201 of the same size', goal: 'none set', run: runShorten },
  { name: 'posts', about: 'durable POST /api/posts (authors with 10 followers) vs a bare uWS 201; the minimal group commit beside', goal: 'ratio ≥ 0.5', run: runPosts },
  { name: 'timeline', about: 'GET /api/timeline (50 items) vs a bare uWS constant body of the same size', goal: 'ratio ≥ 0.4', run: runTimeline },
  {
    name: 'readwrite',
    about: 'timeline reads and posts at once vs each alone (combined fraction); reads beside 1,000 posts/s sent evenly vs alone',
    goal: 'combined ≥ 0.9; reads beside 1,000 posts/s ≥ 0.8',
    run: runReadWrite,
  },
  { name: 'fanout', about: 'one post to 10,000 followers: from the 201 to the last timeline', goal: '< 100 ms (median)', run: runFanout },
  { name: 'limiter', about: 'shared limiter checks/s (the three shorten rules) vs a bare LMDB read-modify-write', goal: 'none set', run: runLimiter },
  {
    name: 'search',
    about: 'GET /api/search per tier vs timeline reads, over 20,000 posts; indexing 50,000 posts (posts/s)',
    goal: 'none set',
    run: runSearch,
  },
  { name: 'suggest', about: 'GET /api/suggest p50 with 1,000,000 vs 1,000 past queries', goal: 'p50 ratio ≤ 1.2', run: runSuggest },
  {
    name: 'notify-ws',
    about: "10,000 open sockets, 5,000 likes to 1,000 of them: from the like's 204 to the socket's message",
    goal: 'p99 < 100 ms',
    run: runNotifyWs,
  },
  {
    name: 'mixed',
    about: 'realistic traffic for --duration (30 s) with open sockets, then an audit that nothing was lost',
    goal: 'audit passes',
    run: runMixed,
  },
];

export function scenarioNamed(name: string): Scenario | undefined {
  return SCENARIOS.find((s) => s.name === name);
}
