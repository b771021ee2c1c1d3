#!/usr/bin/env node
// Runs the compiled test suite and, at the same time, the end-to-end suite again with two HTTP
// threads per server, and ends with one summary line: "N passed, M failed". The two runs go side by
// side because end-to-end tests spend most of their time waiting on servers they booted: one run
// alone leaves the cores idle half of the time. An end-to-end test that does the same work whatever
// the thread count (commands alone, which boot no server; servers with a thread count of their
// own: test/helpers/command-test.ts) runs in the first run only, and so does every test of the
// files in ONE_THREAD_PASS_ONLY below.
//
// Each test file is a tap test run as a plain Node.js process, several at once; its output is TAP,
// which ends with tap's count of its assertions ("# { total: 26, pass: 25, fail: 1 }"). A file that
// passes is one line here; a file that fails, or ends without that count (a crash, a timeout), is
// shown whole. In the whole suite the unit test files of a folder run in one process, one after
// another (scripts/test-batch.js), and count as one: most take less time than a process's start
// and the loading of tap and of the modules they share. Why not tap's own runner: it loads a
// module of its own into every test process (for coverage, which the suite does not collect),
// about a third of a second of CPU each, and the suite starts a few hundred of them on a machine
// whose cores the suite already keeps busy.
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const { existsSync, readFileSync, readdirSync } = require('node:fs');
const path = require('node:path');
const { availableParallelism } = require('node:os');

const root = path.join(__dirname, '..');
const tap = path.join(root, 'node_modules', '.bin', 'tap');

/** How long a test file may run, in seconds: tap's own timeout inside it (TAP_TIMEOUT). */
const TIMEOUT_S = 180;
/** Past its own timeout, a file that has not ended (a hang outside tap's reach) is killed. */
const KILL_AFTER_MS = (TIMEOUT_S + 30) * 1000;
/** How long output is still read after a test process ended (see runFile). */
const OUTPUT_GRACE_MS = 5000;

/**
 * Every *.test.js under dist/test whose TypeScript source still exists, relative to the project
 * root, sorted. tsc's incremental build never deletes what it compiled before, so a test whose
 * source was removed or renamed (or exists only on another branch) would otherwise keep running.
 */
function testFiles(dir) {
  const abs = path.join(root, dir);
  return readdirSync(abs, { recursive: true })
    .filter((f) => f.endsWith('.test.js'))
    .filter((f) => existsSync(path.join(root, 'test', f.replace(/\.js$/, '.ts'))))
    .map((f) => path.join(dir, f))
    .sort();
}

/**
 * Test files each run runs at once: as many as there are cores. With the two runs side by side the
 * cores stay busy while the end-to-end tests wait on the servers they booted.
 */
const JOBS = availableParallelism();

/** tap's count at the end of a file's output: "# { total: 26, pass: 25, fail: 1, skip: 2 }". */
function counts(output) {
  const all = [...output.matchAll(/^#\s*\{\s*total:\s*\d+[^}]*\}\s*$/gm)];
  if (all.length === 0) return null;
  const m = all[all.length - 1][0];
  const get = (k) => Number((new RegExp(`\\b${k}:\\s*(\\d+)`).exec(m) || [])[1] || 0);
  return { pass: get('pass'), fail: get('fail'), skip: get('skip') };
}

/**
 * Runs one test file, or a batch of them in one process (`files`, named `file`); resolves with
 * its counts, whether it failed, and its output.
 */
function runFile({ file, files }, env) {
  return new Promise((resolve) => {
    const started = Date.now();
    const args = files ? [path.join(__dirname, 'test-batch.js'), ...files] : [file];
    const child = spawn(process.execPath, ['--enable-source-maps', ...args], {
      cwd: root,
      env: { ...process.env, ...env, TAP_TIMEOUT: String(TIMEOUT_S) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks = [];
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, KILL_AFTER_MS);
    let ended = false;
    // 'close' waits for every holder of the output pipes: a process the test left running that
    // inherited them (a test's helper process, after a failure) would hold the run forever. So
    // the file ends when its process has, and what it wrote within a few seconds after is kept.
    child.on('exit', (status, signal) => {
      setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        end(status, signal);
      }, OUTPUT_GRACE_MS).unref();
    });
    child.on('close', (status, signal) => end(status, signal));
    function end(status, signal) {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      let output = Buffer.concat(chunks).toString('utf8');
      if (killed) output += `\n# killed: still running ${KILL_AFTER_MS / 1000} s after it started\n`;
      else if (signal) output += `\n# ended by ${signal}\n`;
      const c = counts(output);
      // A file that ended without its count, or with a failing status but no failed assertion (a
      // crash after its tests, an unhandled rejection), counts as one failure.
      const broken = !c || (status !== 0 && c.fail === 0);
      resolve({ file, files, pass: c ? c.pass : 0, fail: (c ? c.fail : 0) + (broken ? 1 : 0), skip: c ? c.skip : 0, failed: broken || (c && c.fail > 0), seconds: (Date.now() - started) / 1000, output });
    }
  });
}

/**
 * Runs each run's files, JOBS of a run at once; prints a line per file as it ends (a failing file's
 * output whole). A worker whose run has no file left takes the next file of a run that has: the
 * one-thread run has far more to do than the two-thread one, and once the latter ended, its last
 * minutes went to two test processes at a time, mostly waiting on the servers they booted, with
 * the machine's cores idle about a seventh of that time.
 */
async function runAll(runs) {
  const results = [];
  // In name order, as tap ran them: most of the first run's unit tests then overlap the second
  // run's end-to-end files. With the end-to-end files first in both runs, four of them at once
  // competed for the cores and the suite took more CPU in all (their waits poll).
  const queues = runs.map((run) => ({ ...run, queue: run.files.map((f) => (typeof f === 'string' ? { file: f } : f)) }));
  const worker = async (home) => {
    for (;;) {
      const run = home.queue.length > 0 ? home : queues.find((q) => q.queue.length > 0);
      if (!run) return;
      const r = { ...(await runFile(run.queue.shift(), run.env)), label: run.label };
      results.push(r);
      const skipped = r.skip ? `, ${r.skip} skipped` : '';
      const batch = r.files ? `${r.files.length} file${r.files.length === 1 ? '' : 's'}; ` : '';
      const line = `${r.failed ? 'FAIL' : 'ok  '} ${r.label}: ${r.file} (${batch}${r.pass} passed, ${r.fail} failed${skipped}; ${r.seconds.toFixed(1)} s)`;
      process.stdout.write((r.failed ? `\n${r.output.trimEnd()}\n` : '') + line + '\n');
    }
  };
  await Promise.all(queues.flatMap((q) => Array.from({ length: Math.min(JOBS, q.queue.length) }, () => worker(q))));
  return results;
}

/**
 * Whether tap's test class is built with the plugins package.json configures ("tap"), as tap's own
 * runner checks before it runs anything: the class's signature lists its plugins. Building takes
 * seconds, so it is done only when they differ (after an install, which puts back the default).
 * Any doubt (a file not where it was) counts as a difference.
 */
function tapBuilt() {
  try {
    const tapjs = path.join(root, 'node_modules', '@tapjs', 'test');
    const built = readFileSync(path.join(tapjs, 'test-built', 'dist', 'commonjs', 'index.js'), 'utf8');
    const signature = /exports\.signature = `([^`]*)`/.exec(built);
    const plugins = new Set(require(path.join(tapjs, 'dist', 'commonjs', 'default-plugins.js')).defaultPlugins);
    for (const p of require(path.join(root, 'package.json')).tap?.plugin ?? []) {
      if (p.startsWith('!')) plugins.delete(p.slice(1));
      else plugins.add(p);
    }
    const wanted = [...plugins].sort((a, b) => a.localeCompare(b, 'en')).join('\n').trim();
    return signature !== null && signature[1].trim() === wanted;
  } catch {
    return false;
  }
}

const only = process.argv.slice(2);
const all = only.length ? only : testFiles('dist/test');

/**
 * End-to-end files the two-thread run leaves out, each with why: what they test is done the same
 * way at any number of HTTP threads, by commands working on a data directory or by one thread
 * answering one request from what is stored, so a second run would repeat the first. What
 * crosses threads (per-thread caches and their invalidation, limits and counters every thread
 * shares, notifications and sockets, the writer's channels, metrics gathered from every thread,
 * start-up, shutdown, memory) is tested in both runs. Most of the suite's CPU goes to starting
 * servers and commands, and a server of two threads costs about twice one of one thread to start.
 */
const ONE_THREAD_PASS_ONLY = new Map([
  ['backup.test.js', 'backups and restores are commands reading and writing the files'],
  ['hostile-input.test.js', 'the checks of one request body, made before anything is stored'],
  ['http-wire.test.js', "the HTTP library's framing, the same code in every thread"],
  ['links-export.test.js', 'one thread streams one read of the stored links'],
  ['links-import.test.js', 'imports are commands; what they stored is read back once'],
  ['links-qr.test.js', 'images drawn from one stored link'],
  ['operator-cli.test.js', 'commands, and the files they and a server leave'],
  ['response-headers.test.js', "the headers of one answer, the same in every thread"],
  ['social-outbox-prune.test.js', 'a background job, run by the pool whatever the HTTP threads'],
]);

/** Whether `file` lies under a folder named one of `folders` (at any depth below dist/test). */
const under = (file, ...folders) => file.split(path.sep).some((part) => folders.includes(part));

const e2e = all.filter((f) => under(f, 'e2e'));

/**
 * What the one-thread run runs: in the whole suite, the unit test files of each folder as one
 * batch, and every end-to-end, browser and benchmark file on its own (they start servers,
 * browsers and loads of their own, and take seconds each); in name order either way.
 */
function oneThreadRun(files) {
  if (only.length) return files;
  const separate = (f) => under(f, 'e2e', 'web', 'bench');
  const batches = new Map();
  for (const f of files.filter((f) => !separate(f))) {
    const folder = path.dirname(f) + path.sep;
    if (!batches.has(folder)) batches.set(folder, []);
    batches.get(folder).push(f);
  }
  const items = [...files.filter(separate).map((f) => ({ file: f })), ...[...batches].map(([folder, batch]) => ({ file: folder, files: batch }))];
  return items.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}
if (!only.length) {
  // A name left here after its file was renamed or removed would quietly stop meaning anything.
  const gone = [...ONE_THREAD_PASS_ONLY.keys()].filter((name) => !e2e.some((f) => path.basename(f) === name));
  if (gone.length) {
    process.stdout.write(`scripts/run-tests.js names end-to-end files that do not exist: ${gone.join(', ')}\n0 passed, 1 failed\n`);
    process.exit(1);
  }
}
const twoThreadE2e = e2e.filter((f) => !ONE_THREAD_PASS_ONLY.has(path.basename(f)));

// Files named on the command line run once, with PERCH_TEST_THREADS as the caller set it (1 by
// default); the whole suite runs everything with 1 HTTP thread and, beside it, the e2e tests with 2
// (but those of ONE_THREAD_PASS_ONLY).
const threads = only.length ? process.env.PERCH_TEST_THREADS ?? '1' : '1';
async function main() {
  // tap builds its test class from the plugins configured in package.json ("tap": our tests are
  // compiled JavaScript, so the TypeScript loader and module mocking, which every test process
  // would otherwise load, are left out). It is built here, before any test file loads it.
  if (!tapBuilt()) {
    const build = spawnSync(tap, ['build'], { cwd: root, encoding: 'utf8' });
    if (build.status !== 0 || !tapBuilt()) {
      process.stdout.write(`tap build failed:\n${build.stdout}${build.stderr}\n0 passed, 1 failed\n`);
      process.exit(1);
    }
  }
  const runs = [{ label: `${threads} thread${threads === '1' ? '' : 's'}`, files: oneThreadRun(all), env: { PERCH_TEST_THREADS: threads } }];
  if (!only.length) runs.push({ label: '2 threads', files: twoThreadE2e, env: { PERCH_TEST_THREADS: '2' } });
  return runAll(runs);
}

main().then((results) => {
  const pass = results.reduce((n, r) => n + r.pass, 0);
  const fail = results.reduce((n, r) => n + r.fail, 0);
  const failed = results.filter((r) => r.failed).map((r) => `${r.file} (${r.label})`);
  if (failed.length > 0) process.stdout.write(`\nfailing files:\n${failed.map((f) => `  ${f}`).join('\n')}\n`);
  process.stdout.write(`\n${pass} passed, ${fail} failed\n`);
  process.exit(fail === 0 ? 0 : 1);
});
