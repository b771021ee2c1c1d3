#!/usr/bin/env node
// Runs the compiled test suite with tap, then the end-to-end suite again with two HTTP threads per
// server, and ends with one summary line: "N passed, M failed".
'use strict';
const { spawnSync } = require('node:child_process');
const { existsSync, readdirSync } = require('node:fs');
const path = require('node:path');

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

function runTap(label, testFiles, env) {
  if (testFiles.length === 0) return { pass: 0, fail: 0 };
  process.stdout.write(`\n== ${label}: ${testFiles.length} files\n`);
  const r = spawnSync(tap, ['--disable-coverage', '--timeout=180', '--reporter=terse', ...testFiles], {
    cwd: root,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  process.stdout.write(r.stdout);
  process.stderr.write(r.stderr);
  // tap's closing summary: "# { total: 26, pass: 25, fail: 1 }" (terse prints the same counts).
  const out = r.stdout + r.stderr;
  const m = /#\s*\{\s*total:\s*(\d+)[^}]*\}/.exec(out);
  if (!m) return { pass: 0, fail: Math.max(1, testFiles.length), broken: true, status: r.status };
  const get = (k) => Number((new RegExp(`${k}:\\s*(\\d+)`).exec(m[0]) || [])[1] || 0);
  return { pass: get('pass'), fail: get('fail'), status: r.status };
}

const only = process.argv.slice(2);
const all = only.length ? only : testFiles('dist/test');
const e2e = all.filter((f) => f.split(path.sep).includes('e2e'));

// Files named on the command line run once, with PERCH_TEST_THREADS as the caller set it (1 by
// default); the whole suite runs everything with 1 HTTP thread, then the e2e tests with 2.
const threads = only.length ? process.env.PERCH_TEST_THREADS ?? '1' : '1';
const results = [runTap(`${only.length ? 'named tests' : 'all tests'} (${threads} HTTP thread${threads === '1' ? '' : 's'})`, all, { PERCH_TEST_THREADS: threads })];
if (!only.length) results.push(runTap('e2e tests (2 HTTP threads)', e2e, { PERCH_TEST_THREADS: '2' }));

const pass = results.reduce((n, r) => n + r.pass, 0);
let fail = results.reduce((n, r) => n + r.fail, 0);
// A tap run that failed without reporting a failing assertion (a crash, a timeout) still fails.
for (const r of results) if (r.status !== 0 && r.status !== undefined && r.fail === 0) fail += 1;
process.stdout.write(`\n${pass} passed, ${fail} failed\n`);
process.exit(fail === 0 ? 0 : 1);
