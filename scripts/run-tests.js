#!/usr/bin/env node
// Runs the compiled test suite with tap and, at the same time, the end-to-end suite again with two
// HTTP threads per server, and ends with one summary line: "N passed, M failed". The two runs go
// side by side because end-to-end tests spend most of their time waiting on servers they booted:
// one run alone leaves the cores idle half of the time. Each run's output is printed whole, in turn.
// An end-to-end test of commands alone, which boots no server (test/helpers/command-test.ts), does
// the same work whatever the thread count: it runs in the first run only.
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const { existsSync, readdirSync } = require('node:fs');
const path = require('node:path');
const { availableParallelism } = require('node:os');

const root = path.join(__dirname, '..');
const tap = path.join(root, 'node_modules', '.bin', 'tap');

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
 * Test files each run runs at once: as many as there are cores. tap's own default leaves one core
 * free (one file at a time on two cores); with the two runs side by side that still left the cores
 * partly idle while the end-to-end tests wait on the servers they booted.
 */
const JOBS = availableParallelism();

function runTap(label, testFiles, env) {
  if (testFiles.length === 0) return Promise.resolve({ pass: 0, fail: 0, output: '' });
  return new Promise((resolve) => {
    const child = spawn(tap, ['--disable-coverage', '--timeout=180', '--reporter=terse', `--jobs=${JOBS}`, ...testFiles], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks = [];
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    child.on('close', (status) => {
      const out = `\n== ${label}: ${testFiles.length} files\n` + Buffer.concat(chunks).toString('utf8');
      // tap's closing summary: "# { total: 26, pass: 25, fail: 1 }" (terse prints the same counts).
      const m = /#\s*\{\s*total:\s*(\d+)[^}]*\}/.exec(out);
      if (!m) return resolve({ pass: 0, fail: Math.max(1, testFiles.length), broken: true, status, output: out });
      const get = (k) => Number((new RegExp(`${k}:\\s*(\\d+)`).exec(m[0]) || [])[1] || 0);
      resolve({ pass: get('pass'), fail: get('fail'), status, output: out });
    });
  });
}

const only = process.argv.slice(2);
const all = only.length ? only : testFiles('dist/test');
const e2e = all.filter((f) => f.split(path.sep).includes('e2e'));

// Files named on the command line run once, with PERCH_TEST_THREADS as the caller set it (1 by
// default); the whole suite runs everything with 1 HTTP thread and, beside it, the e2e tests with 2.
const threads = only.length ? process.env.PERCH_TEST_THREADS ?? '1' : '1';
async function main() {
  // tap builds its test class from the plugins configured in package.json ("tap": our tests are
  // compiled JavaScript, so the TypeScript loader and module mocking, which every test process
  // would otherwise load, are left out). It rebuilds when they differ from what it was built
  // with: built once here, so that the two runs of the whole suite do not both rebuild it at the
  // same time (a single run rebuilds it itself if it must).
  if (!only.length) {
    const build = spawnSync(tap, ['build'], { cwd: root, encoding: 'utf8' });
    if (build.status !== 0) {
      process.stdout.write(`tap build failed:\n${build.stdout}${build.stderr}\n0 passed, 1 failed\n`);
      process.exit(1);
    }
  }
  const runs = [runTap(`${only.length ? 'named tests' : 'all tests'} (${threads} HTTP thread${threads === '1' ? '' : 's'})`, all, { PERCH_TEST_THREADS: threads })];
  if (!only.length) runs.push(runTap('e2e tests (2 HTTP threads)', e2e, { PERCH_TEST_THREADS: '2' }));
  const results = [];
  for (const run of runs) {
    const r = await run;
    process.stdout.write(r.output);
    results.push(r);
  }
  return results;
}

main().then((results) => {
  const pass = results.reduce((n, r) => n + r.pass, 0);
  let fail = results.reduce((n, r) => n + r.fail, 0);
  // A tap run that failed without reporting a failing assertion (a crash, a timeout) still fails.
  for (const r of results) if (r.status !== 0 && r.status !== undefined && r.fail === 0) fail += 1;
  process.stdout.write(`\n${pass} passed, ${fail} failed\n`);
  process.exit(fail === 0 ? 0 : 1);
});
