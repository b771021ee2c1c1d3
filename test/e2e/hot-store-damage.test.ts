// A damaged LMDB (the hot store) is moved aside and replaced by an empty one, with one line saying
// so, instead of crashing serve, status or keygen. What must come back from SQLite does: links
// redirect, timelines read, a flagged account stays throttled.
import t, { type Test } from 'tap';
import { cpSync, openSync, readFileSync, readdirSync, rmSync, writeSync, closeSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, startServer, tempDataDir, type Key, type TestServer } from '../helpers/server';
import { commandTest, pinnedThreadsTest } from '../helpers/command-test';
import { create, shorten, waitFor } from './links-helpers';
import { serverLockHolder } from '../helpers/lock-holder';
import { serverRunsOn } from '../../src/store/server-lock';

const CONFIG = {
  anomaly: { max_links: 3, window_seconds: 10, max_same_domain: 1000, domain_window_seconds: 60, cooloff_seconds: 3600 },
  limits: { shorten: { capacity: 100, refill_per_second: 10, burst_per_second: 100, daily_quota: 1000 } },
};

const pristine = tempDataDir('perch-damage-');
const copies: string[] = [];
t.teardown(() => [pristine, ...copies].forEach((d) => rmSync(d, { recursive: true, force: true })));

let alice: Key;
let bob: Key;
let carol: Key;
let code = '';
let postId = '';

t.before(async () => {
  const server = await startServer({ dataDir: pristine, config: CONFIG });
  try {
    alice = await server.keygen('alice');
    bob = await server.keygen('bob');
    carol = await server.keygen('carol');
    code = await create(server, bob, 'https://example.com/kept');
    t.equal((await server.get('/' + code)).status, 302);
    t.equal((await server.post(`/api/users/${bob.user_id}/follow`, { key: carol.key })).status, 200);
    postId = (await server.post('/api/posts', { key: bob.key, json: { text: 'before the damage' } })).json.id;
    await waitFor('the post in carol\'s timeline', async () => ((await timelineIds(server, carol)).includes(postId) ? true : undefined));
    // alice creates links fast until the detector flags her.
    let n = 0;
    await waitFor('alice to be flagged', async () => {
      const r = await shorten(server, alice, { url: `https://spam${n++}.example/` });
      return r.status === 429 ? true : undefined;
    });
  } finally {
    await server.close();
  }
});

async function timelineIds(server: TestServer, key: Key): Promise<string[]> {
  const r = await server.get('/api/timeline', { key: key.key });
  return r.json.items.map((p: { id: string }) => p.id);
}

/** A copy of the stopped server's data directory, for one damage and one command. */
function copy(): string {
  const dir = tempDataDir('perch-damaged-');
  copies.push(dir);
  cpSync(pristine, dir, { recursive: true });
  return dir;
}

function seededBytes(length: number, seed: number): Buffer {
  const b = Buffer.alloc(length);
  let s = seed;
  for (let i = 0; i < length; i++) {
    s = (s * 1103515245 + 12345) % 2147483648;
    b[i] = s >>> 16;
  }
  return b;
}

function overwrite(file: string, offset: number, bytes: Buffer): void {
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, bytes, 0, bytes.length, offset);
  } finally {
    closeSync(fd);
  }
}

const PAGE = 4096;

const DAMAGES: Record<string, (dataFile: string) => void> = {
  // The first 4 KiB zeroed: meta page 0 gone.
  'zeroed header': (f) => overwrite(f, 0, Buffer.alloc(PAGE)),
  // Random bytes over the root page of the main database (which lists the named databases), as
  // the newer meta page names it: the header is intact, the first read finds the damage.
  'random bytes over the main root page': (f) => {
    const head = readFileSync(f).subarray(0, 2 * PAGE);
    const metaAt = (i: number) => i * PAGE + 24;
    const txnid = (i: number) => head.readBigUInt64LE(metaAt(i) + 128);
    const newest = txnid(1) > txnid(0) ? 1 : 0;
    const root = Number(head.readBigUInt64LE(metaAt(newest) + 112));
    overwrite(f, root * PAGE, seededBytes(PAGE, 7));
  },
  // Every page after the two meta pages replaced by random bytes.
  'random bytes over every page': (f) => {
    const pages = statSync(f).size / PAGE;
    for (let p = 2; p < pages; p++) overwrite(f, p * PAGE, seededBytes(PAGE, p));
  },
};

function damaged(name: string): string {
  const dir = copy();
  DAMAGES[name](join(dir, 'lmdb', 'data.mdb'));
  return dir;
}

function movedAside(dir: string): string[] {
  return readdirSync(dir).filter((f) => /^lmdb\.damaged-\d{8}T\d{6}Z$/.test(f));
}

const REPAIR_LINE = /^perch: the hot store \(.*lmdb\) was damaged \(.+\); moved it to .*lmdb\.damaged-\d{8}T\d{6}Z and started an empty one$/;

/** A server on a repaired data directory serves what SQLite holds, and alice is still throttled. */
async function servesAsBefore(t: Test, server: TestServer): Promise<void> {
  const go = await server.get('/' + code);
  t.equal(go.status, 302, 'the link redirects');
  t.equal(go.headers.get('location'), 'https://example.com/kept');
  t.ok((await timelineIds(server, carol)).includes(postId), "carol's timeline reads the post");
  const throttled = await shorten(server, alice, { url: 'https://after.example/' });
  t.equal(throttled.status, 429, 'the flag still throttles alice');
  t.ok(throttled.json.retry_after_seconds > 60, `for the rest of her cool-off: ${throttled.json.retry_after_seconds} s`);
  t.equal((await shorten(server, bob, { url: 'https://after.example/' })).status, 201, 'others create links (the code pool refilled)');
}

for (const name of ['zeroed header', 'random bytes over the main root page']) {
  // The command repairs; the server after it only shows what the repaired directory serves, the
  // same at any thread count (the serve test below runs at both).
  pinnedThreadsTest(`${name}: perch status moves the store aside and reports`, async (t) => {
    const dir = damaged(name);
    const r = await runCli(['status', '--json', '--data', dir]);
    t.equal(r.code, 0, `no crash: ${r.stderr}`);
    t.match(r.stdout, /"users":3[,}]/, 'the status, from SQLite');
    // With --json, stdout is the JSON alone: the data directory is named on stderr, then the repair.
    const lines = r.stderr.trim().split('\n');
    t.ok(lines.includes(`data directory ${dir}`), 'the data directory is named');
    const others = lines.filter((l) => !l.startsWith('data directory '));
    t.equal(others.length, 1, 'one line besides');
    t.match(others[0], REPAIR_LINE);
    if (name === 'random bytes over the main root page') {
      // Found in the file's bytes, before any process maps the page: whatever the pages around
      // it hold, which decides where LMDB would follow its garbage.
      t.match(others[0], /\(the main database: page \d+ says it is page \d+\)/, 'found by the page check');
    }
    t.equal(movedAside(dir).length, 1);
    const server = await startServer({ dataDir: dir, config: CONFIG, threads: 1 });
    t.teardown(() => server.close());
    t.notOk(server.logs.some((l) => l.includes('hot store')), 'the server finds a healthy store');
    await servesAsBefore(t, server);
  });

  pinnedThreadsTest(`${name}: perch keygen moves the store aside and makes the key`, async (t) => {
    const dir = damaged(name);
    const r = await runCli(['keygen', '--user', 'dave', '--json', '--data', dir]);
    t.equal(r.code, 0, `no crash: ${r.stderr}`);
    t.equal(JSON.parse(r.stdout).handle, 'dave');
    t.match(r.stderr.trim().split('\n').filter((l) => !l.startsWith('data directory ')).join('\n'), REPAIR_LINE);
    t.equal(movedAside(dir).length, 1);
    const server = await startServer({ dataDir: dir, config: CONFIG, threads: 1 });
    t.teardown(() => server.close());
    await servesAsBefore(t, server);
    const dave = JSON.parse(r.stdout) as Key;
    t.equal((await server.get('/api/me', { key: dave.key })).status, 200, 'the new key works');
  });
}

for (const name of Object.keys(DAMAGES)) {
  t.test(`${name}: perch serve moves the store aside, says so once, and serves`, async (t) => {
    const dir = damaged(name);
    const server = await startServer({ dataDir: dir, config: CONFIG });
    t.teardown(() => server.close());
    const lines = server.logs.filter((l) => l.includes('hot store'));
    t.equal(lines.length, 1, 'one log line');
    const line = JSON.parse(lines[0]);
    t.equal(line.level, 'warn');
    t.equal(line.msg, 'hot store damaged: moved aside, started an empty one');
    t.type(line.reason, 'string');
    t.match(line.moved_to, /lmdb\.damaged-\d{8}T\d{6}Z$/);
    t.same(movedAside(dir), [line.moved_to.split('/').pop()]);
    await servesAsBefore(t, server);
  });
}

commandTest('beside a running server, a command or a second server leaves a damaged store in place and says why', async (t) => {
  const dir = damaged('zeroed header');
  const server = serverLockHolder(dir);
  await server.held;
  const refusal = /^perch: the hot store in .*lmdb looks damaged \(page 0 is not a meta page\), and a server is running on .*: stop it, then start it again \(perch serve replaces a damaged hot store as it starts\)$/m;
  const keygen = await runCli(['keygen', '--user', 'dave', '--json', '--data', dir]);
  t.equal(keygen.code, 1);
  t.match(keygen.stderr, refusal);
  t.equal(keygen.stdout, '', 'no key made');
  const serve = await runCli(['serve', '--port', '0', '--data', dir]);
  t.equal(serve.code, 1);
  t.match(serve.stderr, refusal, 'the second server refused to start (it did not run into the timeout)');
  t.same(movedAside(dir), [], 'nothing moved aside');

  await server.kill();
  const after = await runCli(['keygen', '--user', 'dave', '--json', '--data', dir]);
  t.equal(after.code, 0, `the server gone, the command repairs: ${after.stderr}`);
  t.equal(movedAside(dir).length, 1);
});

commandTest('beside a running server, the checks in the process still find a damaged page', async (t) => {
  // A command beside a server leaves out the child's read of every entry (docs/architecture.md,
  // "A damaged hot store"); the page check finds this damage in the file's bytes all the same.
  const dir = damaged('random bytes over the main root page');
  const server = serverLockHolder(dir);
  await server.held;
  t.teardown(() => server.kill());
  const keygen = await runCli(['keygen', '--user', 'dave', '--json', '--data', dir]);
  t.equal(keygen.code, 1);
  t.match(keygen.stderr, /^perch: the hot store in .*lmdb looks damaged \(the main database: page \d+ says it is page \d+\), and a server is running on /m);
  t.equal(keygen.stdout, '', 'no key made');
  t.same(movedAside(dir), [], 'nothing moved aside');
});

t.test('a running server holds its data directory until it stops', async (t) => {
  const dir = copy();
  t.equal(serverRunsOn(dir), false);
  const server = await startServer({ dataDir: dir, config: CONFIG });
  t.equal(serverRunsOn(dir), true);
  const status = await runCli(['status', '--json', '--data', dir]);
  t.equal(status.code, 0, `a command beside it runs: ${status.stderr}`);
  await server.close();
  t.equal(serverRunsOn(dir), false);
});
