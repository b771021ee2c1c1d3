// perch's build of lmdb-js (scripts/build-lmdb.js, scripts/lmdb-fixes.js): opening the hot store
// leaves the transaction counter that writing processes share alone, as upstream LMDB does, and
// an error's detail never overruns the buffer lmdb-js writes it into.
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join, sep } from 'node:path';
import { endWithTestProcess, tempDataDir } from '../helpers/server';
import { lmdbPath } from '../../src/store/lmdb';
import { LMDB_FIXES, loadedLmdbAddon } from '../../src/store/lmdb-build';

const root = join(__dirname, '..', '..', '..');
const fixes = require(join(root, 'scripts', 'lmdb-fixes.js')) as Record<'withOpenFix' | 'withBoundedErrors' | 'withFixes', (source: string) => string> & {
  FIXES: Array<[name: string, fix: unknown]>;
};
const { withOpenFix, withBoundedErrors, withFixes } = fixes;
const MDB_C = join(root, 'node_modules', 'lmdb', 'dependencies', 'lmdb', 'libraries', 'liblmdb', 'mdb.c');
const UNGUARDED = '\n\tif (env->me_txns)\n\t\tenv->me_txns->mti_txnid = meta.mm_txnid;\n';
const GUARDED = '\n\tif (prev && env->me_txns)\n\t\tenv->me_txns->mti_txnid = meta.mm_txnid;\n';

t.test('the fix puts upstream LMDB’s guard on the one store of the counter in mdb_env_open2', async (t) => {
  const source = readFileSync(MDB_C, 'latin1');
  const fixed = withOpenFix(source);
  t.equal(fixed.split(GUARDED).length - 1, 1, 'the guarded store, once');
  t.equal(fixed.split(UNGUARDED).length - 1, 0, 'no unguarded one left');
  t.equal(fixed.length, source.length + 'prev && '.length, 'nothing else changed in length');
  t.equal(fixed.replace(GUARDED, UNGUARDED), source, 'and nothing else changed at all');

  t.throws(() => withOpenFix(fixed), { name: 'FixError', message: /found it 0 times/ }, 'a source already fixed is refused');
  t.throws(() => withOpenFix(source.replace(UNGUARDED, UNGUARDED + UNGUARDED)), { name: 'FixError', message: /found it 2 times/ }, 'two stores are refused');
  t.throws(() => withOpenFix(source.replace('\nmdb_env_open2(MDB_env *env, int prev)\n{', '\nmdb_env_open2(MDB_env *env)\n{')), { name: 'FixError', message: /found 0/ }, 'an mdb_env_open2 of another shape is refused');
  const moved = source.replace(UNGUARDED, '\n') + `\nstatic void elsewhere(MDB_env *env, MDB_meta meta)\n{${UNGUARDED}}\n`;
  t.throws(() => withOpenFix(moved), { name: 'FixError', message: /not in mdb_env_open2/ }, 'a store outside mdb_env_open2 is refused');
});

t.test('every detail lmdb-js writes into an error buffer is bounded by the buffer', async (t) => {
  const source = readFileSync(MDB_C, 'latin1');
  const unbounded = source.split('sprintf(last_error, ').length - 1;
  t.ok(unbounded > 0, `lmdb-js writes ${unbounded} error details with sprintf`);
  const fixed = withBoundedErrors(source);
  t.equal(fixed.split('snprintf(last_error, 100, ').length - 1, unbounded, 'every one bounded to 100 bytes');
  t.equal(fixed.split('sprintf(last_error, ').length - 1, 0, 'no unbounded one left');
  t.equal(fixed.replaceAll('snprintf(last_error, 100, ', 'sprintf(last_error, '), source, 'nothing else changed');
  // The one that overran: a failed page write's detail, up to 130 characters.
  t.match(fixed, /last_error = malloc\(100\);\s*snprintf\(last_error, 100, "Attempting to write page at position/);
  t.throws(() => withBoundedErrors(source.replace('last_error = malloc(100);', 'last_error = malloc(64);')), { name: 'FixError', message: /smaller than 100 bytes: 64/ }, 'a smaller buffer is refused');
  t.throws(() => withBoundedErrors(fixed), { name: 'FixError', message: /no unbounded/ }, 'a source already fixed is refused');
  t.equal(withFixes(source), withBoundedErrors(withOpenFix(source)), 'the build applies both');
});

t.test('the server checks for every fix the build makes, by the names the build records', async (t) => {
  t.same([...LMDB_FIXES].sort(), fixes.FIXES.map(([name]) => name).sort());
});

t.test('this process runs perch’s build of the lmdb-js addon, with perch’s fixes', async (t) => {
  const addon = loadedLmdbAddon();
  t.ok(addon.path?.endsWith(['', 'lmdb', 'build', 'Release', 'lmdb.node'].join(sep)), `loaded ${addon.path}`);
  t.equal(addon.fixed, true);
});

/** lock.mdb begins with LMDB's magic number, the lock format, then the shared transaction counter. */
const MAGIC = 0xbeefc0de;
const COUNTER_AT = 8;

function readCounter(lockFile: string): { magic: number; counter: bigint } {
  const b = readFileSync(lockFile);
  return { magic: b.readUInt32LE(0), counter: b.readBigUInt64LE(COUNTER_AT) };
}

function writeCounter(lockFile: string, value: bigint): void {
  const fd = openSync(lockFile, 'r+');
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(value);
  writeSync(fd, b, 0, 8, COUNTER_AT);
  closeSync(fd);
}

function lines(child: ChildProcess): { next(): Promise<string>; err(): string } {
  let out = '';
  let err = '';
  const waiting: Array<() => void> = [];
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    for (const w of waiting.splice(0)) w();
  });
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return {
    async next() {
      while (!out.includes('\n')) await new Promise<void>((resolve) => waiting.push(resolve));
      const line = out.slice(0, out.indexOf('\n'));
      out = out.slice(out.indexOf('\n') + 1);
      return line;
    },
    err: () => err,
  };
}

const STORE = JSON.stringify(require.resolve('../../src/store/lmdb'));

/**
 * Opens the hot store's environment of `dir` in a new process, reads one value and closes it.
 * lmdb-js directly, not openHotStore, which also commits a transaction of its own: here the open
 * is the only thing that could move the counter.
 */
async function openElsewhere(dir: string, env: NodeJS.ProcessEnv = process.env): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, ['-e', `
    const { open } = require(${JSON.stringify(require.resolve('lmdb'))});
    const root = open({ path: ${JSON.stringify(lmdbPath(dir))} });
    process.stdout.write(String(root.get('written')) + '\\n');
    root.close().then(() => process.exit(0));
  `], { stdio: ['ignore', 'pipe', 'pipe'], env });
  endWithTestProcess(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { code, out, err };
}

t.test('opening the hot store beside a process that has it open leaves the shared transaction counter alone', async (t) => {
  const dir = tempDataDir('perch-lmdb-open-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const lockFile = join(lmdbPath(dir), 'lock.mdb');

  // The process that keeps the environment open (a server): it writes, then waits. Nothing in
  // this test process opens the environment: closing any descriptor of lock.mdb would let go of
  // that process's locks, and the next open would then take the environment for itself.
  const holder = spawn(process.execPath, ['-e', `
    const { openHotStore } = require(${STORE});
    const hot = openHotStore(${JSON.stringify(dir)});
    (async () => {
      for (let i = 1; i <= 3; i++) await hot.root.put('written', i);
      process.stdout.write('ready\\n');
      process.stdin.once('data', async () => {
        await hot.root.put('written', 4);
        process.stdout.write('wrote ' + hot.root.get('written') + '\\n');
        await hot.close();
        process.exit(0);
      });
    })();
  `], { stdio: ['pipe', 'pipe', 'pipe'] });
  endWithTestProcess(holder);
  const holderOut = lines(holder);
  t.equal(await holderOut.next(), 'ready');

  const before = readCounter(lockFile);
  t.equal(before.magic, MAGIC, 'lock.mdb has the layout this test reads');
  t.ok(before.counter >= 3n, `the counter holds the last commit (${before.counter})`);
  // The moment the fault needs: a commit of another process lands while this open runs, so the
  // counter is ahead of the meta page the opener read. Here it is put ahead by hand, and far.
  const ahead = before.counter + 100n;
  writeCounter(lockFile, ahead);

  const opened = await openElsewhere(dir);
  t.equal(opened.err, '');
  t.equal(opened.code, 0);
  t.equal(opened.out, '3\n', 'the opener read the data');
  t.equal(readCounter(lockFile).counter, ahead, 'the open left the counter where it was');

  // lmdb-js's prebuilt addon, where installed, sets it back to the meta page's: the fault.
  const prebuilt = join(root, 'node_modules', '@lmdb', `lmdb-${process.platform}-${process.arch}`);
  if (existsSync(prebuilt)) {
    const old = await openElsewhere(dir, { ...process.env, PREBUILDS_ONLY: '1' });
    t.equal(old.code, 0);
    t.equal(readCounter(lockFile).counter, before.counter, 'the prebuilt addon set the counter back: what this test would catch');
    writeCounter(lockFile, ahead);
  }

  // The holder still writes: its next transaction follows the counter.
  holder.stdin!.write('go\n');
  t.equal(await holderOut.next(), 'wrote 4');
  await new Promise((resolve) => holder.on('exit', resolve));
  t.equal(holderOut.err(), '');
});
