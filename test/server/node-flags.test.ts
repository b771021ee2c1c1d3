// The Node.js flags and the environment of `perch serve` (server/node-flags.ts) are written where
// perch is started; each place must carry all of them.
import t from 'tap';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { missingServeEnvironment, missingServeFlags, SERVE_ENVIRONMENT, SERVE_NODE_FLAGS } from '../../src/server/node-flags';
import { PERCH, ROOT } from '../helpers/server';

const ENVIRONMENT = Object.entries(SERVE_ENVIRONMENT).map(([name, value]) => `${name}=${value}`);

t.test('bin/perch starts node with the flags and the environment', async (t) => {
  const shebang = readFileSync(PERCH, 'utf8').split('\n')[0];
  t.equal(shebang, `#!/usr/bin/env -S ${ENVIRONMENT.join(' ')} node ${SERVE_NODE_FLAGS.join(' ')}`);
  // Run as a program (through its shebang), as the container's entry point and an npm bin link do.
  const flags = await new Promise<string>((resolve, reject) =>
    execFile(PERCH, ['--version'], { env: { ...process.env, NODE_DEBUG: '' } }, (err, stdout) => (err ? reject(err) : resolve(stdout))),
  );
  t.match(flags, /\d+\.\d+\.\d+/, 'the shebang runs');
});

t.test('npm start passes the flags', async (t) => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  t.equal(pkg.scripts.start, `${ENVIRONMENT.join(' ')} node ${SERVE_NODE_FLAGS.join(' ')} bin/perch serve`);
});

t.test('missingServeEnvironment names what an environment lacks or sets otherwise', async (t) => {
  t.same(missingServeEnvironment({ ...SERVE_ENVIRONMENT }), []);
  t.same(missingServeEnvironment({}), ENVIRONMENT);
  t.same(missingServeEnvironment({ MALLOC_ARENA_MAX: '8' }), ['MALLOC_ARENA_MAX=2']);
});

t.test('missingServeFlags names what a command line lacks', async (t) => {
  t.same(missingServeFlags([...SERVE_NODE_FLAGS]), []);
  t.same(missingServeFlags([]), [...SERVE_NODE_FLAGS]);
  t.same(missingServeFlags(['--max-semi-space-size=3', '--v8-pool-size=1']), ['--heap-growing-percent=50']);
});
