#!/usr/bin/env node
// What `npm install` runs once the dependencies are in place: lmdb-js's addon built with perch's
// fixes (scripts/build-lmdb.js) and the build of the server, the client and the service worker
// (`npm run build`), side by side. Neither needs the other's output, and each leaves a core idle
// much of the time (the TypeScript build runs on one; the addon's compiler on one or two), so
// together they take little more than the longer of the two. Fails when either fails, with its
// output.
'use strict';
const { spawn } = require('node:child_process');
const path = require('node:path');

const root = path.join(__dirname, '..');

/** Runs a command to its end; resolves with its exit status and what it printed. */
function run(name, command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => out.push(c));
    child.on('error', (err) => resolve({ name, status: 1, output: `${err.message}\n` }));
    child.on('close', (status, signal) => resolve({ name, status: status ?? 1, signal, output: Buffer.concat(out).toString('utf8') }));
  });
}

async function main() {
  const npm = process.env.npm_execpath;
  const results = await Promise.all([
    run('lmdb', process.execPath, [path.join(__dirname, 'build-lmdb.js')]),
    // Through the npm that runs this install when there is one, as `npm run build` would be.
    npm ? run('build', process.execPath, [npm, 'run', 'build']) : run('build', 'npm', ['run', 'build']),
  ]);
  for (const r of results) process.stdout.write(r.output);
  const failed = results.filter((r) => r.status !== 0);
  for (const r of failed) process.stderr.write(`perch: ${r.name} failed (${r.signal ?? `exit ${r.status}`})\n`);
  process.exitCode = failed.length > 0 ? 1 : 0;
}

main();
