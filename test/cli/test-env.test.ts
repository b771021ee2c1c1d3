// The environment the tests give the perch processes they start (helpers/server.ts, cleanEnv):
// the test runner's own modules stay out of them, anything else in NODE_OPTIONS stays.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { cleanEnv, startServer, untraced, withPinnedThreads, withoutServers, withoutTestRunner } from '../helpers/server';

const TAP_IMPORT = '"--import=file:///srv/perch/node_modules/@tapjs/processinfo/dist/esm/import.mjs"';

t.test('the test runner\'s modules are dropped from NODE_OPTIONS, other options kept in order', async (t) => {
  t.equal(withoutTestRunner(TAP_IMPORT), '');
  t.equal(withoutTestRunner(`--max-old-space-size=64 ${TAP_IMPORT} --require ./x.js`), '--max-old-space-size=64 --require ./x.js');
  t.equal(withoutTestRunner('--import /srv/perch/node_modules/@tapjs/processinfo/dist/esm/import.mjs --trace-gc'), '--trace-gc');
  t.equal(withoutTestRunner('--require "/a dir/with spaces.js"'), '--require "/a dir/with spaces.js"');
  t.equal(withoutTestRunner(''), '');
});

t.test('cleanEnv: no PERCH_ variable and no test-runner module reach a started process', async (t) => {
  const saved = { ...process.env };
  t.teardown(() => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  });
  process.env.PERCH_DATA = '/somewhere';
  process.env.NODE_OPTIONS = `${TAP_IMPORT} --trace-warnings`;
  let env = cleanEnv();
  t.equal(env.PERCH_DATA, undefined);
  t.equal(env.NODE_OPTIONS, '--trace-warnings');
  t.equal(env.PATH, process.env.PATH, 'everything else is passed on');
  process.env.NODE_OPTIONS = TAP_IMPORT;
  env = cleanEnv();
  t.notOk('NODE_OPTIONS' in env, 'an empty NODE_OPTIONS is left out');
});

t.test('untraced: env sets exactly the NODE_OPTIONS the test meant, then runs the command', async (t) => {
  t.same(untraced(['node', 'bin/perch', 'migrate'], {}), ['env', '-u', 'NODE_OPTIONS', 'node', 'bin/perch', 'migrate']);
  t.same(untraced(['node', 'x.js'], { NODE_OPTIONS: '--require ./p.js' }), ['env', 'NODE_OPTIONS=--require ./p.js', 'node', 'x.js']);
  const env = cleanEnv();
  const command = untraced([process.execPath, '-e', 'process.stdout.write(JSON.stringify([process.env.NODE_OPTIONS ?? null, process.execArgv.filter((a) => a.startsWith("--"))]))'], env);
  const out = execFileSync(command[0], command.slice(1), { env, encoding: 'utf8' });
  t.same(JSON.parse(out), [null, []], 'the started process has no NODE_OPTIONS and no preloaded module');
});

t.test('a test marked to run in one pass cannot boot a server that follows the pass', async (t) => {
  // Refused before anything is started: the marks would otherwise keep such a server from the
  // two-thread pass without anyone noticing.
  await t.rejects(withoutServers(() => startServer().then(() => undefined)), /a command test boots no server/);
  await t.rejects(withPinnedThreads(() => startServer().then(() => undefined)), /boots none that follows the pass/);
  await t.rejects(withPinnedThreads(() => startServer({ threads: 2, dataDir: '/proc/nope' }).then(() => undefined)), /exited with 1 before listening/, 'one with its own thread count is started (here it fails on its data directory)');
});
