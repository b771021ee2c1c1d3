#!/usr/bin/env node
// Builds lmdb-js's native addon from the sources its npm package ships, with perch's fixes to
// LMDB (scripts/lmdb-fixes.js), and puts it where lmdb-js loads a local build before its prebuilt
// binaries: node_modules/lmdb/build/Release/lmdb.node. Run by `npm install` (scripts/postinstall.js); a
// second run with nothing changed does nothing.
//
// It compiles against the headers of the Node.js that runs it (<prefix>/include/node) and never
// downloads anything; without those headers, or without a C++ compiler, it fails and says so
// rather than leave the prebuilt binary, which has the faults, in place.
'use strict';
const { spawnSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { FIXES, FixError, withFixes } = require('./lmdb-fixes');

/** Written beside the addon; src/store/lmdb-build.ts reads it to tell that the fixes are loaded. */
const MARKER = 'perch-build.json';
const MDB_C = path.join('dependencies', 'lmdb', 'libraries', 'liblmdb', 'mdb.c');

function fail(message) {
  process.stderr.write(`perch: cannot build lmdb with perch's fixes: ${message}\n`);
  process.exit(1);
}

function nodeGypScript() {
  // npm tells its lifecycle scripts where its own node-gyp is; run by hand, npm's copy beside node.
  const candidates = [
    process.env.npm_config_node_gyp,
    path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  ];
  const found = candidates.find((c) => c && fs.existsSync(c));
  if (!found) fail('node-gyp not found (it comes with npm)');
  return found;
}

/** The folder of an installed package (lmdb's "exports" hide its package.json from require). */
function packageDir(name) {
  let dir = path.dirname(require.resolve(name));
  while (!fs.existsSync(path.join(dir, 'package.json')) || JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).name !== name) {
    const up = path.dirname(dir);
    if (up === dir) fail(`cannot find the folder of the ${name} package`);
    dir = up;
  }
  return dir;
}

function main() {
  const lmdbDir = packageDir('lmdb');
  const version = JSON.parse(fs.readFileSync(path.join(lmdbDir, 'package.json'), 'utf8')).version;
  const nodePrefix = path.resolve(path.dirname(process.execPath), '..');
  if (!fs.existsSync(path.join(nodePrefix, 'include', 'node', 'node_api.h'))) {
    fail(`no Node.js headers in ${path.join(nodePrefix, 'include', 'node')}`);
  }

  let source;
  try {
    source = withFixes(fs.readFileSync(path.join(lmdbDir, MDB_C), 'latin1'));
  } catch (err) {
    if (err instanceof FixError) fail(`lmdb ${version}: ${err.message}`);
    throw err;
  }
  const digest = createHash('sha256')
    .update(`${version}\0${process.versions.modules}\0${process.arch}\0`)
    .update(source, 'latin1')
    .digest('hex');

  const releaseDir = path.join(lmdbDir, 'build', 'Release');
  const addon = path.join(releaseDir, 'lmdb.node');
  const markerPath = path.join(releaseDir, MARKER);
  try {
    if (JSON.parse(fs.readFileSync(markerPath, 'utf8')).digest === digest && fs.existsSync(addon)) return;
  } catch {
    // No marker, or not ours: build.
  }

  // A copy of what the compiler reads, so that the installed package's files stay as published.
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'perch-lmdb-'));
  try {
    for (const part of ['binding.gyp', 'src', 'dependencies']) {
      fs.cpSync(path.join(lmdbDir, part), path.join(work, part), { recursive: true });
    }
    fs.writeFileSync(path.join(work, MDB_C), source, 'latin1');
    const started = Date.now();
    const gyp = spawnSync(process.execPath, [nodeGypScript(), 'rebuild', `--nodedir=${nodePrefix}`, '--jobs', String(os.availableParallelism())], {
      cwd: work,
      env: {
        ...process.env,
        // binding.gyp asks `node` for node-addon-api's headers from the build directory.
        NODE_PATH: path.dirname(packageDir('node-addon-api')),
        // Variables binding.gyp reads: the build is always the one that was measured and tested
        // (LMDB_DATA_V1 would even compile an older data format, which the fixes do not touch).
        LMDB_DATA_V1: '',
        ENABLE_V8_FUNCTIONS: '',
        ENABLE_FAST_API_CALLS: '',
      },
      encoding: 'utf8',
    });
    if (gyp.status !== 0) {
      process.stderr.write(gyp.stdout + gyp.stderr);
      fail(`node-gyp exited with ${gyp.status ?? gyp.signal}`);
    }
    fs.mkdirSync(releaseDir, { recursive: true });
    // Renamed into place: a process loading the addon meanwhile sees the old file or the new one.
    fs.copyFileSync(path.join(work, 'build', 'Release', 'lmdb.node'), addon + '.new');
    fs.renameSync(addon + '.new', addon);
    fs.writeFileSync(markerPath, JSON.stringify({ lmdb: version, fixes: FIXES.map(([name]) => name), digest }) + '\n');
    process.stdout.write(`perch: built lmdb ${version} with perch's fixes in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main();
