// The CLI and start-up: flags, config errors, refusals, shutdown, node-id leases.
import t from 'tap';
import { existsSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { freePort, runCli, startServer, tempDataDir, testThreads } from '../helpers/server';
import { commandTest, pinnedThreadsTest } from '../helpers/command-test';

const dirs: string[] = [];
function dir(): string {
  const d = tempDataDir();
  dirs.push(d);
  return d;
}
t.teardown(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

commandTest('--help works everywhere and exits 0', async (t) => {
  for (const args of [['--help'], ['serve', '--help'], ['keygen', '--help'], ['keys', '--help'], ['keys', 'help'], ['keys', 'list', '--help'], ['flags', '--help'], ['migrate', '--help'], ['status', '--help']]) {
    const r = await runCli(args);
    t.equal(r.code, 0, args.join(' '));
    t.match(r.stdout, /Usage: perch/);
  }
});

commandTest('a bad flag or value prints one line and exits 2', async (t) => {
  for (const args of [['serve', '--bogus'], ['serve', '--port', 'eighty'], ['serve', '--port', '70000'], ['serve', '--threads', '0'], ['nosuchcommand'], ['keygen'], ['keygen', '--user', 'bad handle!'], ['keygen', '--user', 'x'.repeat(31)], ['bench', 'nosuchscenario']]) {
    const r = await runCli([...args, '--data', dir()]);
    t.equal(r.code, 2, `${args.join(' ')} exits 2`);
    const lines = r.stderr.trim().split('\n');
    t.equal(lines.length, 1, `${args.join(' ')} prints one line: ${r.stderr.trim()}`);
    t.ok(lines[0].length > 10, `the line says what is wrong: ${lines[0]}`);
  }
});

commandTest('a command group without its command says which there are, in one line, exit 2', async (t) => {
  for (const [args, line] of [
    [['keys'], 'perch: keys needs a command (list, revoke); see perch keys --help'],
    [['flags'], 'perch: flags needs a command (list, clear); see perch flags --help'],
    [['keys', 'nosuchcommand'], "perch: keys has no command 'nosuchcommand' (list, revoke)"],
  ] as const) {
    const r = await runCli([...args]);
    t.equal(r.code, 2, `${args.join(' ')} exits 2`);
    t.equal(r.stderr, line + '\n');
    t.equal(r.stdout, '');
  }
});

commandTest('config errors stop the server with one line naming the key, exit 2', async (t) => {
  const d = dir();
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ server: { colour: 'blue' } }, /unknown configuration key server\.colour/],
    [{ limits: { shorten: { capacity: 'twenty' } } }, /limits\.shorten\.capacity/],
    [{ social: { timeline_cap: -1 } }, /social\.timeline_cap/],
    [{ links: { pool_target: 100, pool_low_water: 200 } }, /^perch: invalid configuration key links\.pool_low_water: must not be greater than links\.pool_target \(100\), but is 200$/],
    [{ links: { blocklist: ['evil.example', '*'] } }, /^perch: invalid configuration key links\.blocklist\.1: names no host/],
  ];
  for (const [config, pattern] of cases) {
    const file = join(d, 'bad.json');
    writeFileSync(file, JSON.stringify(config));
    const r = await runCli(['serve', '--port', '0', '--data', d, '--config', file]);
    t.equal(r.code, 2);
    t.match(r.stderr.trim(), pattern);
    t.equal(r.stderr.trim().split('\n').length, 1);
  }
  const env = await runCli(['serve', '--port', '0', '--data', d], { PERCH_SERVER_THREADS: 'many' });
  t.equal(env.code, 2);
  t.equal(env.stderr, 'perch: invalid configuration key server.threads (from PERCH_SERVER_THREADS): expected a number, got "many"\n');
  const unknown = await runCli(['serve', '--port', '0', '--data', d], { PERCH_SERVER_COLOUR: 'blue' });
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /unknown configuration variable PERCH_SERVER_COLOUR/);
  const missing = await runCli(['serve', '--port', '0', '--data', d, '--config', join(d, 'nope.json')]);
  t.equal(missing.code, 2);
  t.match(missing.stderr, /cannot read config file/);
});

pinnedThreadsTest('--config deep-merges over the defaults, PERCH_ variables over the file', async (t) => {
  const threadsGauge = async (env: NodeJS.ProcessEnv) => {
    const server = await startServer({ threads: null, config: { server: { threads: 2 } }, env });
    try {
      return { metrics: (await server.get('/metrics')).text, logs: server.logs };
    } finally {
      await server.close();
    }
  };
  const fromFile = await threadsGauge({});
  t.match(fromFile.metrics, /^perch_http_threads 2$/m, 'threads from the config file');
  const fromEnv = await threadsGauge({ PERCH_SERVER_THREADS: '1', PERCH_LOG_LEVEL: 'warn' });
  t.match(fromEnv.metrics, /^perch_http_threads 1$/m, 'the variable wins over the file');
  t.notOk(fromEnv.logs.some((l) => l.includes('"msg":"migration applied"')), 'info lines suppressed at level warn');
  t.ok(fromEnv.logs.some((l) => l.includes('"msg":"listening"')), 'the listening notice is always logged');
});

t.test('refuses to start on a taken port, with one line', async (t) => {
  const first = await startServer();
  t.teardown(() => first.close());
  const fresh = dir();
  const r = await runCli(['serve', '--port', String(first.port), '--data', fresh]);
  t.equal(r.code, 1);
  t.match(r.stderr.trim(), new RegExp(`^perch: port ${first.port} on 127\\.0\\.0\\.1 is already in use$`));
  t.notMatch(r.stdout, /migration applied/, 'checked before anything is migrated');
  t.notOk(existsSync(join(fresh, 'perch.db')), 'no database was made');
  t.equal((await first.get('/healthz')).status, 200, 'the first server is unaffected');
});

pinnedThreadsTest('a server of one HTTP thread holds its port alone: nobody else can listen on it', async (t) => {
  const server = await startServer({ threads: 1 });
  t.teardown(() => server.close());
  // uWS listens with SO_REUSEPORT unless told not to (threads share a port so): a listener of
  // another process would otherwise be handed part of the server's connections.
  const other = await new Promise<string>((resolve) => {
    const code = `require('uWebSockets.js').App().listen('127.0.0.1', ${server.port}, (s) => { process.stdout.write(String(!!s)); process.exit(0); })`;
    execFile(process.execPath, ['-e', code], { cwd: join(__dirname, '..', '..', '..'), timeout: 10_000 }, (_err, stdout) => resolve(stdout));
  });
  t.equal(other, 'false', 'a second uWS listener on the port is refused');
  t.equal((await server.get('/healthz')).status, 200, 'the server is unaffected');
});

pinnedThreadsTest('servers of two HTTP threads started at the same moment on one port: one serves, the other refuses', async (t) => {
  // Threads share their port through SO_REUSEPORT, which another process may use as well: the
  // supervisor's check that the port is free is over long before the threads listen.
  for (let round = 0; round < 3; round++) {
    const port = await freePort();
    const starts = await Promise.allSettled([startServer({ threads: 2, port }), startServer({ threads: 2, port })]);
    const started = starts.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    t.teardown(() => Promise.all(started.map((s) => s.close())));
    t.equal(started.length, 1, `round ${round + 1}: one server listens`);
    const refused = starts.find((s) => s.status === 'rejected');
    t.match(refused?.reason?.message, new RegExp(`perch: port ${port} on 127\\.0\\.0\\.1 is already in use`), 'the other says why');
    t.equal((await started[0].get('/healthz')).status, 200, 'the server that listens answers');
  }
});

commandTest('refuses an unusable data dir, with one line', async (t) => {
  const d = dir();
  const file = join(d, 'a-file');
  writeFileSync(file, 'not a directory');
  const r = await runCli(['serve', '--port', '0', '--data', file]);
  t.equal(r.code, 1);
  t.match(r.stderr.trim(), /^perch: data directory .*a-file is not usable: E[A-Z]+$/);
});

commandTest("a command that SQLite fails names SQLite's code, with one line", async (t) => {
  const d = dir();
  const garbage = Buffer.alloc(8192);
  for (let i = 0; i < garbage.length; i++) garbage[i] = (i * 7919 + 13) % 251;
  writeFileSync(join(d, 'perch.db'), garbage);
  for (const args of [['status'], ['keygen', '--user', 'alice']]) {
    const r = await runCli([...args, '--data', d]);
    t.equal(r.code, 1, `${args[0]} exits 1`);
    t.equal(r.stderr, 'perch: file is not a database (SQLITE_NOTADB)\n', `${args[0]} says what SQLite said, and its code`);
  }
  const serve = await runCli(['serve', '--port', '0', '--data', d]);
  t.equal(serve.code, 1, 'serve exits 1');
  t.equal(serve.stderr, `perch: cannot open the database in ${d}: file is not a database (SQLITE_NOTADB)\n`, 'serve names the code too');
});

commandTest('refuses to run on the uWS JavaScript fallback', async (t) => {
  const r = await runCli(['serve', '--port', '0', '--data', dir()], { UWS_USE_FALLBACK: '1' });
  t.equal(r.code, 1);
  t.match(r.stderr, /native binary/);
  t.equal(r.stderr.trim().split('\n').filter((l) => l.startsWith('perch:')).length, 1);
});

commandTest('migrate is idempotent and says what it applied', async (t) => {
  const d = dir();
  const first = await runCli(['migrate', '--data', d]);
  t.equal(first.code, 0);
  t.match(first.stdout, /^applied 001 accounts$/m);
  const second = await runCli(['migrate', '--data', d]);
  t.equal(second.code, 0);
  t.match(second.stdout, /^nothing to apply; schema is at version \d+$/m);
});

commandTest('keygen: --json shape, case-insensitive handles, keys list never shows keys', async (t) => {
  const d = dir();
  const a = await runCli(['keygen', '--user', 'Bob_1', '--json', '--data', d]);
  t.equal(a.code, 0);
  const ka = JSON.parse(a.stdout);
  t.same(Object.keys(ka).sort(), ['admin', 'handle', 'key', 'key_id', 'user_id'], "exactly the contract's fields");
  t.match(ka.key_id, /^key_[0-9a-f]+$/);
  t.equal(ka.handle, 'Bob_1');
  t.equal(ka.admin, false);
  t.match(ka.user_id, /^[1-9]\d+$/);
  const b = JSON.parse((await runCli(['keygen', '--user', 'bob_1', '--admin', '--json', '--data', d])).stdout);
  t.equal(b.user_id, ka.user_id, 'same user regardless of case');
  t.equal(b.handle, 'Bob_1', 'the original spelling is kept');
  t.equal(b.admin, true);
  const list = await runCli(['keys', 'list', '--json', '--data', d]);
  t.equal(list.code, 0);
  t.notMatch(list.stdout, new RegExp(ka.key));
  t.notMatch(list.stdout, new RegExp(b.key));
  const listed = JSON.parse(list.stdout) as Array<{ key_id: string; user_id: string; admin: boolean }>;
  t.equal(listed.length, 2);
  t.same(listed.map((k) => k.key_id).sort(), [ka.key_id, b.key_id].sort(), 'keygen --json names the key id that keys list shows');
  t.ok(listed.every((k) => /^key_/.test(k.key_id) && k.user_id === ka.user_id));
  t.same(listed.map((k) => k.admin).sort(), [false, true]);
  for (const who of ['bob_1', '@Bob_1', ka.user_id]) {
    const mine = await runCli(['keys', 'list', '--user', who, '--json', '--data', d]);
    t.equal(JSON.parse(mine.stdout).length, 2, `--user ${who}`);
  }
  const nobody = await runCli(['keys', 'list', '--user', 'nobody', '--data', d]);
  t.equal(nobody.code, 2, 'an unknown user is a bad value');
  t.equal(nobody.stderr, 'perch: no user nobody\n');
  t.equal(nobody.stdout, '');
  const human = await runCli(['keygen', '--user', 'carol', '--data', d]);
  t.match(human.stdout, /^perch_[A-Za-z0-9_-]{32}$/m);
  const revoke = await runCli(['keys', 'revoke', 'key_doesnotexist', '--data', d]);
  t.equal(revoke.code, 2, 'an unknown key id is a bad value');
  t.equal(revoke.stderr, 'perch: no key with id key_doesnotexist\n');
  t.equal(revoke.stdout, '');
  const unflag = await runCli(['flags', 'clear', 'nobody', '--data', d]);
  t.equal(unflag.code, 2, 'so is an unknown user to lift a flag of');
  t.equal(unflag.stderr, 'perch: no user nobody\n');
  const revoked = await runCli(['keys', 'revoke', ka.key_id, '--data', d]);
  t.equal(revoked.code, 0, revoked.stderr);
  t.equal(revoked.stdout, `data directory ${d}\nrevoked ${ka.key_id}\n`);
  const revokedAt = (JSON.parse((await runCli(['keys', 'list', '--json', '--data', d])).stdout) as Array<{ key_id: string; revoked_at: string | null }>)
    .find((k) => k.key_id === ka.key_id)!.revoked_at;
  t.match(revokedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const again = await runCli(['keys', 'revoke', ka.key_id, '--data', d]);
  t.equal(again.code, 0, 'revoking a key revoked already is what was asked: done');
  t.equal(again.stdout, `data directory ${d}\n${ka.key_id} was already revoked (${revokedAt})\n`);
  t.equal(again.stderr, '');
  const after = JSON.parse((await runCli(['keys', 'list', '--json', '--data', d])).stdout) as Array<{ key_id: string; revoked_at: string | null }>;
  t.equal(after.find((k) => k.key_id === ka.key_id)!.revoked_at, revokedAt, 'the first revocation time stands');
  t.same(after.filter((k) => k.key_id !== ka.key_id).map((k) => k.revoked_at), [null, null], "bob's other key and carol's are untouched");
});

t.test('two servers on one data dir hold distinct node ids', async (t) => {
  const d = dir();
  const a = await startServer({ dataDir: d });
  const b = await startServer({ dataDir: d });
  t.teardown(async () => {
    await a.close();
    await b.close();
  });
  const status = await runCli(['status', '--json', '--data', d]);
  t.equal(status.code, 0, status.stderr);
  const leases = JSON.parse(status.stdout).node_leases as Array<{ node_id: number; pid: number }>;
  const threads = testThreads();
  // Each server leases one id per HTTP thread and one for its supervisor.
  t.equal(leases.filter((l) => l.pid === a.proc.pid).length, threads + 1);
  t.equal(leases.filter((l) => l.pid === b.proc.pid).length, threads + 1);
  t.equal(new Set(leases.map((l) => l.node_id)).size, leases.length, `distinct node ids: ${leases.map((l) => l.node_id).join(',')}`);
  // Users minted by both servers' key generation and the CLI never collide.
  const [k1, k2] = [await a.keygen('one'), await b.keygen('two')];
  t.not(k1.user_id, k2.user_id);
});

t.test('SIGTERM stops the server cleanly with exit 0 and frees the leases', async (t) => {
  const d = dir();
  const s = await startServer({ dataDir: d });
  t.equal((await s.get('/healthz')).status, 200);
  const started = Date.now();
  const code = await s.stop('SIGTERM');
  t.equal(code, 0);
  t.ok(Date.now() - started < 10_000, 'within 10 s');
  const status = JSON.parse((await runCli(['status', '--json', '--data', d])).stdout);
  t.equal(status.node_leases.filter((l: { pid: number }) => l.pid === s.proc.pid).length, 0);
  const sigint = await startServer({ dataDir: d });
  t.equal(await sigint.stop('SIGINT'), 0, 'SIGINT too');
});

commandTest('commands that read a store do not make one where --data points at nothing', async (t) => {
  const missing = join(dir(), 'not-here');
  for (const args of [['status'], ['status', '--json'], ['keys', 'list'], ['keys', 'revoke', 'key_x'], ['flags', 'list'], ['flags', 'clear', 'bob']]) {
    const r = await runCli([...args, '--data', missing]);
    t.equal(r.code, 2, args.join(' '));
    t.equal(r.stderr, `perch: no perch data in ${missing} (perch migrate, keygen or serve creates it)\n`);
  }
  t.notOk(existsSync(missing), 'nothing was created');
  t.equal((await runCli(['migrate', '--data', missing])).code, 0, 'migrate makes it');
  const status = await runCli(['status', '--json', '--data', missing]);
  t.equal(status.code, 0, status.stderr);
  t.same(JSON.parse(status.stdout).links.click_queue, { depth: 0, lag_seconds: 0 });
});
