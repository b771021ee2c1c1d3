// The CLI as an operator meets it: where the data directory is and that every command says so,
// output into a closed pipe, a wrong Node.js version, file permissions, and `perch status`.
import t from 'tap';
import { execFile, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AccountStore } from '../../src/accounts/store';
import { hashApiKey, newApiKey, newKeyId } from '../../src/core/api-key';
import { openSqlite } from '../../src/store/sqlite';
import { openHotStore } from '../../src/store/lmdb';
import { SERVERS_DB } from '../../src/store/server-registry';
import { VERSION } from '../../src/version';
import { PERCH, ROOT, cleanEnv, runCli, startServer, tempDataDir, untraced } from '../helpers/server';
import { commandTest } from '../helpers/command-test';

const dirs: string[] = [];
function dir(): string {
  const d = tempDataDir('perch-ops-');
  dirs.push(d);
  return d;
}
t.teardown(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

t.test('the data directory: --data, else PERCH_DATA, else the config file\'s data, else ./data; every command names it', async (t) => {
  const home = dir();
  const elsewhere = join(home, 'elsewhere');
  mkdirSync(elsewhere);
  const store = join(home, 'store');

  // The issue as reported: from another directory, keygen made ./data there. Now it says so...
  const stray = await runCli(['keygen', '--user', 'carol'], {}, { cwd: elsewhere });
  t.equal(stray.code, 0, stray.stderr);
  t.equal(stray.stdout.split('\n')[0], `data directory ${join(elsewhere, 'data')} (new)`, 'a new store is pointed out');
  // ...and PERCH_DATA names the store wherever the command runs from.
  const viaEnv = await runCli(['keygen', '--user', 'carol', '--json'], { PERCH_DATA: store }, { cwd: elsewhere });
  t.equal(viaEnv.code, 0, viaEnv.stderr);
  t.equal(viaEnv.stderr, `data directory ${store} (new)\n`, 'with --json the directory goes to stderr');
  const carol = JSON.parse(viaEnv.stdout);
  t.same(Object.keys(carol).sort(), ['admin', 'handle', 'key', 'key_id', 'user_id']);

  const again = await runCli(['keygen', '--user', 'dave'], { PERCH_DATA: store }, { cwd: home });
  t.equal(again.stdout.split('\n')[0], `data directory ${store}`, 'not new the second time');

  // A config file's data, relative to the file, names the same store from anywhere.
  const etc = join(home, 'etc');
  mkdirSync(etc);
  writeFileSync(join(etc, 'perch.json'), JSON.stringify({ data: '../store' }));
  const list = await runCli(['keys', 'list', '--config', join(etc, 'perch.json')], {}, { cwd: elsewhere });
  t.equal(list.code, 0, list.stderr);
  t.equal(list.stdout.split('\n')[0], `data directory ${store}`);
  t.match(list.stdout, new RegExp(`^${carol.key_id}\\s+@carol\\s+no\\s+\\S+\\s+active$`, 'm'), 'keys list is a table');
  t.match(list.stdout.split('\n')[1], /^KEY ID\s+USER\s+ADMIN\s+CREATED\s+STATE$/);

  // A server started from another directory with PERCH_DATA alone (startServer would pass --data).
  const env = { ...cleanEnv(), PERCH_DATA: store };
  const command = untraced([process.execPath, PERCH, 'serve', '--port', '0'], env);
  const proc = spawn(command[0], command.slice(1), { cwd: elsewhere, env, stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => proc.kill('SIGKILL'));
  const listening = await firstLine(proc, (l) => l.includes('"msg":"listening"'));
  const info = JSON.parse(listening);
  t.equal(info.data, store, 'the listening notice names the directory');
  const me = await fetch(`http://127.0.0.1:${info.port}/api/me`, { headers: { authorization: `Bearer ${carol.key}` } });
  t.equal(me.status, 200, 'the key made from elsewhere works on the server');
  proc.kill('SIGTERM');
  await new Promise((r) => proc.once('exit', r));

  // --data wins over PERCH_DATA.
  const explicit = join(home, 'explicit');
  const flag = await runCli(['migrate', '--data', explicit], { PERCH_DATA: store });
  t.equal(flag.stdout.split('\n')[0], `data directory ${explicit} (new)`);
  // A command that only reads says which directory had nothing, and how to name another.
  const none = await runCli(['status'], {}, { cwd: home });
  t.equal(none.code, 2);
  t.equal(none.stderr, `perch: no perch data in ${join(home, 'data')} (perch migrate, keygen or serve creates it; set --data or PERCH_DATA)\n`);
});

/** Resolves with the first stdout line of `proc` that `match` accepts (or rejects after 20 s). */
function firstLine(proc: ReturnType<typeof spawn>, match: (line: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    let stderr = '';
    const timer = setTimeout(() => reject(new Error(`no matching line in 20 s: ${stderr}`)), 20_000);
    proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    proc.stdout!.on('data', (d: Buffer) => {
      buffered += d.toString();
      for (const line of buffered.split('\n').slice(0, -1)) {
        if (match(line)) {
          clearTimeout(timer);
          resolve(line);
        }
      }
      buffered = buffered.slice(buffered.lastIndexOf('\n') + 1);
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}: ${stderr}`));
    });
  });
}

/** Runs `perch args` with stdout a pipe whose reader is gone before perch writes anything. */
function runIntoClosedPipe(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const env = cleanEnv();
    const command = untraced([process.execPath, PERCH, ...args], env);
    const child = spawn(command[0], command.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

/** Runs a shell pipeline; resolves with perch's exit status (PIPESTATUS[0]) and its stderr. */
function pipeline(perchArgs: string[], into: string): Promise<{ status: number; stdout: string; stderr: string }> {
  const quoted = perchArgs.map((a) => `'${a}'`).join(' ');
  const script = `'${process.execPath}' '${PERCH}' ${quoted} 2>"$ERR" | ${into}; echo "\${PIPESTATUS[0]}" >"$STATUS"`;
  const scratch = dir();
  const env = { ...cleanEnv(), ERR: join(scratch, 'err'), STATUS: join(scratch, 'status') };
  return new Promise((resolve) => {
    execFile('bash', ['-c', script], { env, timeout: 60_000 }, (_err, stdout) => {
      const read = (f: string) => require('node:fs').readFileSync(join(scratch, f), 'utf8') as string;
      resolve({ status: Number(read('status').trim()), stdout, stderr: read('err') });
    });
  });
}

commandTest('output into a closed pipe ends quietly with exit 0 (perch status | head -1)', async (t) => {
  const d = dir();
  const made = await runCli(['keygen', '--user', 'alice', '--json', '--data', d]);
  const alice = JSON.parse(made.stdout);
  // Enough keys that `keys list` writes far more than a pipe holds: head has exited long before
  // the last write, every time.
  const db = openSqlite(d);
  const accounts = new AccountStore(db);
  const now = new Date().toISOString();
  db.transaction(() => {
    for (let i = 0; i < 3000; i++) accounts.addKey(newKeyId(), alice.user_id, hashApiKey(newApiKey()), false, now);
  })();
  db.close();

  for (const args of [['status', '--data', d], ['status', '--json', '--data', d], ['keys', 'list', '--data', d], ['keys', 'list', '--json', '--data', d], ['flags', 'list', '--data', d], ['--help']]) {
    const r = await runIntoClosedPipe(args);
    t.equal(r.code, 0, `${args.join(' ')} into a closed pipe exits 0`);
    // With --json the data directory is named on stderr; nothing else is written there.
    t.equal(r.stderr, args.includes('--json') ? `data directory ${d}\n` : '', `${args.join(' ')}: no stack trace`);
  }
  for (const args of [['status', '--data', d], ['keys', 'list', '--data', d]]) {
    const r = await pipeline(args, 'head -1');
    t.equal(r.status, 0, `perch ${args[0]} ... | head -1 exits 0`);
    t.equal(r.stderr, '', 'and prints nothing on stderr');
    t.match(r.stdout, new RegExp(`^data directory\\s+${d}\n$`), 'head got the first line');
  }
  const full = await runCli(['keys', 'list', '--data', d]);
  t.ok(full.stdout.length > 128 * 1024, `the whole list is ${full.stdout.length} bytes: more than a pipe's buffer (64 KiB)`);
});

commandTest('perch --version prints the version, and help names the new commands', async (t) => {
  const v = await runCli(['--version']);
  t.equal(v.code, 0);
  t.equal(v.stdout, `${VERSION}\n`);
  const help = await runCli(['--help']);
  t.match(help.stdout, /^\s+backup \[options\] <dir>\s+write a consistent snapshot/m);
  t.match(help.stdout, /^\s+restore \[options\] <dir>\s+make a data directory/m);
  for (const cmd of ['backup', 'restore']) {
    const r = await runCli([cmd, '--help']);
    t.equal(r.code, 0, `${cmd} --help`);
    t.match(r.stdout.replace(/\s+/g, ' '), /--data <dir> data directory \(default: PERCH_DATA, else the config's "data", else \.\/data\)/);
  }
  const missing = await runCli(['backup']);
  t.equal(missing.code, 2, 'backup without a directory is a bad flag');
  t.equal(missing.stderr.trim().split('\n').length, 1);
});

commandTest('another Node.js: serve says perch needs Node 20; engines says so too', async (t) => {
  const preload = join(ROOT, 'dist', 'test', 'fixtures', 'other-node.js');
  const r = await runCli(['serve', '--port', '0', '--data', dir()], { NODE_OPTIONS: `--require ${preload}` });
  t.equal(r.code, 1);
  t.equal(r.stderr, 'perch: perch needs Node 20 (this is Node 22.1.0, for which uWebSockets.js has no native binary)\n');
  const other18 = await runCli(['serve', '--port', '0', '--data', dir()], { NODE_OPTIONS: `--require ${preload}`, FAKE_NODE_VERSION: '18.20.0', FAKE_NODE_MODULES: '108' });
  t.equal(other18.stderr, 'perch: perch needs Node 20 (this is Node 18.20.0)\n', 'a binary alone is not enough');
  const pkg = JSON.parse(require('node:fs').readFileSync(join(ROOT, 'package.json'), 'utf8'));
  t.equal(pkg.engines.node, '20.x');
  t.equal(Number(process.versions.node.split('.')[0]), 20, 'the suite itself runs on the supported version');
});

function mode(path: string): string {
  return (statSync(path).mode & 0o777).toString(8);
}

t.test('data files are 0600 and directories 0700, and an older installation is tightened', async (t) => {
  const d = dir();
  const server = await startServer({ dataDir: d });
  const key = await server.keygen('pics');
  const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000' + '1f15c4890000000a49444154789c6300010000050001' + '0d0a2db40000000049454e44ae426082', 'hex');
  const up = await server.post('/api/media', { key: key.key, body: png, headers: { 'content-type': 'image/png' } });
  t.equal(up.status, 201, up.text);
  t.equal(mode(d), '700', 'the data directory');
  for (const f of ['perch.db', 'perch.db-wal', 'perch.db-shm']) t.equal(mode(join(d, f)), '600', f);
  t.equal(mode(join(d, 'lmdb')), '700', 'lmdb/');
  for (const f of readdirSync(join(d, 'lmdb'))) t.equal(mode(join(d, 'lmdb', f)), '600', `lmdb/${f}`);
  t.equal(mode(join(d, 'media')), '700', 'media/');
  t.equal(mode(join(d, 'media', up.json.id)), '600', 'an uploaded file');
  await server.close();

  // An installation made before: world-readable. The next command that opens it tightens it.
  chmodSync(d, 0o755);
  chmodSync(join(d, 'perch.db'), 0o644);
  chmodSync(join(d, 'lmdb'), 0o755);
  chmodSync(join(d, 'lmdb', 'data.mdb'), 0o644);
  chmodSync(join(d, 'media'), 0o755);
  const status = await runCli(['status', '--data', d]);
  t.equal(status.code, 0, status.stderr);
  t.equal(mode(d), '700');
  t.equal(mode(join(d, 'perch.db')), '600');
  t.equal(mode(join(d, 'lmdb')), '700');
  t.equal(mode(join(d, 'lmdb', 'data.mdb')), '600');
  t.equal(mode(join(d, 'media')), '700');
});

t.test('perch status: aligned, whether a server runs (pid, version, uptime, address), sizes', async (t) => {
  const d = dir();
  const server = await startServer({ dataDir: d });
  await server.keygen('alice');
  const json = await server.cli(['status', '--json']);
  t.equal(json.code, 0, json.stderr);
  const s = JSON.parse(json.stdout);
  t.equal(s.version, VERSION);
  t.equal(s.servers.length, 1);
  const [running] = s.servers;
  t.equal(running.pid, server.proc.pid);
  t.equal(running.version, VERSION);
  t.equal(running.url, `http://127.0.0.1:${server.port}`);
  t.equal(running.public_origin, `http://localhost:${server.port}`);
  t.ok(running.uptime_seconds >= 0 && running.uptime_seconds < 120, `uptime ${running.uptime_seconds}`);
  t.ok(Date.parse(running.started_at) <= Date.now());
  t.ok(s.database.bytes > 0, 'database size');
  t.type(s.database.wal_bytes, 'number');
  t.same(s.media_files, { files: 0, bytes: 0 });
  t.ok(s.node_leases.some((l: { pid: number }) => l.pid === server.proc.pid));

  const human = await server.cli(['status']);
  const lines = human.stdout.trimEnd().split('\n');
  t.match(lines[0], new RegExp(`^data directory\\s+${d}$`));
  const column = lines[0].indexOf(d);
  for (const line of lines) t.ok(line.length > column && line[column - 1] === ' ' && line[column] !== ' ', `aligned at ${column}: ${line}`);
  t.match(human.stdout, new RegExp(`^server\\s+running: pid ${server.proc.pid}, perch ${VERSION.replace(/\./g, '\\.')}, up \\d+s, http://127\\.0\\.0\\.1:${server.port}, \\d HTTP threads?$`, 'm'));
  t.match(human.stdout, /^database\s+\d+\.\d KiB \+ \d+(\.\d)? (B|KiB|MiB) write-ahead log, schema version \d+$/m);
  t.match(human.stdout, /^media files\s+0, 0 B$/m);

  t.equal(s.server_running, true);
  t.equal(s.migrations_pending, 0);
  t.type(s.links, 'object', "the capabilities' sections");

  await server.stop();
  const after = await runCli(['status', '--data', d]);
  t.match(after.stdout, /^server\s+not running$/m);
  const stopped = JSON.parse((await runCli(['status', '--json', '--data', d])).stdout);
  t.same(stopped.servers, []);
  t.equal(stopped.server_running, false);
});

t.test('perch status: a server killed is not running, whatever its record says; an older schema is shown, not migrated', async (t) => {
  const d = dir();
  const server = await startServer({ dataDir: d });
  await server.stop('SIGKILL');
  // Its record stays in the hot store, and its pid may be any live process's by now (in a
  // container, where the server was pid 1, the very command that looks is): here, this test's.
  const hot = openHotStore(d);
  const records = hot.db<Record<string, unknown>, number>(SERVERS_DB);
  const [record] = [...records.getRange()].map((r) => r.value);
  t.ok(record, "the killed server's record is there");
  records.putSync(process.pid, { ...record, pid: process.pid });
  await hot.close();
  const killed = await runCli(['status', '--data', d]);
  t.equal(killed.code, 0, killed.stderr);
  t.match(killed.stdout, /^server\s+not running$/m);
  t.notMatch(killed.stdout, /server memory/);
  t.equal(JSON.parse((await runCli(['status', '--json', '--data', d])).stdout).server_running, false);

  // An older schema: the last migration not recorded as applied.
  const db = openSqlite(d);
  const latest = (db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number }).v;
  db.prepare('DELETE FROM schema_migrations WHERE version = ?').run(latest);
  db.close();
  const older = await runCli(['status', '--json', '--data', d]);
  t.equal(older.code, 0, older.stderr);
  const o = JSON.parse(older.stdout);
  t.equal(o.schema_version, latest - 1);
  t.equal(o.migrations_pending, 1);
  t.equal(o.links, undefined, "the capabilities' sections wait for the migration");
  const human = await runCli(['status', '--data', d]);
  t.match(human.stdout, /^\s+1 migration of perch .+ not applied: perch migrate applies them \(a server does as it starts\); the rest is shown after$/m);
  const check = openSqlite(d, { readonly: true });
  t.equal((check.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number }).v, latest - 1, 'status applied nothing');
  check.close();
});
