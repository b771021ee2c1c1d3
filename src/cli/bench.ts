// perch bench [scenario] [args...]: runs a benchmark of bench/ (compiled into dist/bench/) in a
// child process, so its load generator and the servers it starts are separate from this one.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from './common';

/** Scenario name → compiled script and its leading arguments. */
export const SCENARIOS: Record<string, { script: string; args: string[]; about: string }> = {
  redirect: { script: 'redirect.js', args: [], about: 'GET /{code} over 10k links vs a bare uWS 302' },
  posts: { script: 'social.js', args: ['posts'], about: 'durable POST /api/posts vs a bare uWS 201' },
  timeline: { script: 'social.js', args: ['timeline'], about: 'GET /api/timeline (50 items) vs a bare uWS constant body' },
  fanout: { script: 'social.js', args: ['fanout'], about: 'one post to 10,000 followers: 201 → last timeline' },
  readwrite: { script: 'social.js', args: ['readwrite'], about: 'GET /api/timeline beside a post load vs the same reads alone' },
  limiter: { script: 'limiter.js', args: [], about: 'shared limiter checks/s vs a bare LMDB read-modify-write' },
  mixed: { script: 'mixed.js', args: [], about: 'redirects with posts being created beside them vs redirects alone' },
  'notify-ws': { script: 'notify-ws.js', args: [], about: '10,000 open sockets, a storm of likes to 1,000 of them: 204 → socket message' },
  search: { script: 'search.js', args: ['search'], about: 'GET /api/search per tier vs timeline reads; indexing posts/s' },
  suggest: { script: 'search.js', args: ['suggest'], about: 'GET /api/suggest p50 with 1,000 vs 1,000,000 past queries' },
};

export function benchCommand(scenario: string | undefined, extra: string[]): Promise<void> {
  if (!scenario) {
    for (const [name, s] of Object.entries(SCENARIOS)) process.stdout.write(`${name.padEnd(10)}${s.about}\n`);
    return Promise.resolve();
  }
  const s = SCENARIOS[scenario];
  if (!s) throw new UsageError(`unknown scenario "${scenario}"; one of: ${Object.keys(SCENARIOS).join(', ')}`);
  const script = join(__dirname, '..', '..', 'bench', s.script);
  if (!existsSync(script)) throw new Error(`benchmark ${script} is not built; run npm run build`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...s.args, ...extra], { stdio: 'inherit' });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`benchmark ${scenario} exited with ${code}`))));
  });
}
