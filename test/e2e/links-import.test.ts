// perch import kutt|shlink|yourls|csv: each importer on a fixture in its source's documented
// export shape (codes, targets, dates, visit totals, what is skipped and why), a second run that
// imports nothing, a dry run that writes nothing, and progress on a large file.
import t from 'tap';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ROOT, runCli, startServer, tempDataDir, testThreads, type Key, type TestServer } from '../helpers/server';
import { commandTest } from '../helpers/command-test';
import { create } from './links-helpers';

const FIXTURES = join(ROOT, 'test', 'fixtures', 'import');
let server: TestServer;
let alice: Key;
let bob: Key;

t.before(async () => {
  server = await startServer({ threads: testThreads(), config: { server: { public_origin: 'https://sho.rt' } } });
  alice = await server.keygen('alice');
  bob = await server.keygen('bob');
  // A code someone else holds already: every importer must skip it.
  await create(server, bob, 'https://bob.example/', { alias: 'taken1' });
});
t.teardown(() => server?.close());

async function importFile(format: string, file: string, ...extra: string[]) {
  const r = await server.cli(['import', format, join(FIXTURES, file), '--user', 'alice', ...extra]);
  return { code: r.code, lines: r.stdout.trim().split('\n'), stderr: r.stderr };
}

async function details(code: string) {
  const r = await server.get(`/api/links/${encodeURIComponent(code)}`, { key: alice.key });
  t.equal(r.status, 200, `details of ${code}`);
  return r.json;
}

t.test('kutt: codes, targets, dates, expiry and visit totals; passwords, taken codes and bad targets skipped', async (t) => {
  const r = await importFile('kutt', 'kutt.json');
  t.equal(r.code, 0, r.stderr);
  t.same(r.lines, [
    'skipped entry 3 (secret): protected by a password in Kutt, which exports no password',
    'skipped entry 4 (taken1): code taken1 is in use',
    'skipped entry 6 (ftp-link): url "ftp://files.example/report.pdf" must use http or https',
    'imported 3, skipped 3',
  ]);
  const one = await details('kutt-one');
  t.match(one, { url: 'https://example.com/one', short_url: 'https://sho.rt/kutt-one', created_at: '2023-03-01T10:00:00.000Z', expires_at: null, status: 'active', password_protected: false });
  t.match(one.clicks, { total: 42, bots: 0, last_24h: 0, imported: { total: 42, bots: 0 } });
  const promo = await details('Promo2024');
  t.match(promo, { url: 'https://shop.example/promo?utm_source=kutt', created_at: '2024-01-15T08:30:00.000Z', expires_at: '2030-01-01T00:00:00.000Z' });
  t.equal(promo.clicks.total, 7);
  const old = await details('old-one');
  t.match(old, { url: 'http://legacy.example/page', expires_at: '2023-01-01T00:00:00.000Z', status: 'expired' });
  t.equal(old.clicks.total, 100);
  t.equal((await server.get('/secret')).status, 404, 'a skipped entry is not a link');
  const go = await server.get('/kutt-one');
  t.equal(go.status, 302);
  t.equal(go.headers.get('location'), 'https://example.com/one');
  t.equal((await server.get('/old-one')).status, 410, 'imported as it was: expired');
  t.equal((await server.get('/taken1')).headers.get('location'), 'https://bob.example/', "bob's link is untouched");

  const again = await importFile('kutt', 'kutt.json');
  t.equal(again.code, 0);
  t.same(again.lines, [
    'skipped entry 1 (kutt-one): already imported',
    'skipped entry 2 (Promo2024): already imported',
    'skipped entry 3 (secret): protected by a password in Kutt, which exports no password',
    'skipped entry 4 (taken1): code taken1 is in use',
    'skipped entry 5 (old-one): already imported',
    'skipped entry 6 (ftp-link): url "ftp://files.example/report.pdf" must use http or https',
    'imported 0, skipped 6',
  ]);
});

t.test('shlink: pages one after another, bots apart, domains sharing a code, old visitsCount', async (t) => {
  const r = await importFile('shlink', 'shlink.json');
  t.equal(r.code, 0, r.stderr);
  t.same(r.lines, [
    'skipped entry 3 (x.y): code "x.y": may contain only A-Z, a-z, 0-9, _ and -',
    'skipped entry 4 (other.example/Abc12): code Abc12 is in use (by entry 2 (Abc12) of this file)',
    'imported 3, skipped 2',
  ]);
  const docs = await details('shl-1');
  t.match(docs, { url: 'https://example.org/docs', created_at: '2021-08-21T18:34:16.000Z', expires_at: null });
  t.match(docs.clicks, { total: 300, bots: 28, imported: { total: 300, bots: 28 } });
  const sale = await details('Abc12');
  t.match(sale, { url: 'https://example.org/sale', created_at: '2024-02-02T12:00:00.000Z', expires_at: '2031-05-05T10:00:00.000Z' });
  t.equal(sale.clicks.total, 5);
  const legacy = await details('legacy9');
  t.match(legacy, { url: 'https://example.org/legacy', created_at: '2019-01-01T00:00:00.000Z' });
  t.equal(legacy.clicks.total, 12);
  const again = await importFile('shlink', 'shlink.json');
  t.equal(again.lines[again.lines.length - 1], 'imported 0, skipped 5');
});

t.test('yourls: a dry run writes nothing; then keywords, times as UTC, clicks; quoted fields', async (t) => {
  const expectedSkips = [
    'skipped line 4 (q,1): code "q,1": may contain only A-Z, a-z, 0-9, _ and -',
    'skipped line 6 (api): code "api": "api" is reserved',
    'skipped line 7 (taken1): code taken1 is in use',
    'skipped line 8 (badtime): timestamp is not a date: "2021-13-45 99:00:00"',
  ];
  const dry = await importFile('yourls', 'yourls.csv', '--dry-run');
  t.equal(dry.code, 0, dry.stderr);
  t.same(dry.lines, [...expectedSkips, 'dry run: nothing was written; a real run would have done this:', 'imported 3, skipped 4']);
  t.equal((await server.get('/api/links/ozh', { key: alice.key })).status, 404, 'the dry run wrote nothing');

  const r = await importFile('yourls', 'yourls.csv');
  t.same(r.lines, [...expectedSkips, 'imported 3, skipped 4']);
  const ozh = await details('ozh');
  t.match(ozh, { url: 'http://ozh.org/', created_at: '2009-08-30T16:34:41.000Z', expires_at: null });
  t.equal(ozh.clicks.total, 5);
  t.equal((await details('yourls')).clicks.total, 17);
  const quoted = await details('title-quote');
  t.match(quoted, { url: 'https://example.net/quote', created_at: '2021-05-06T07:08:09.000Z' });
  t.equal(quoted.clicks.total, 9);
  const again = await importFile('yourls', 'yourls.csv');
  t.equal(again.lines[again.lines.length - 1], 'imported 0, skipped 7');
});

t.test('csv: codes kept, pool codes for rows without one, the same row twice is two links', async (t) => {
  const before = (await server.get('/api/links?limit=100', { key: alice.key })).json.items.length;
  const r = await importFile('csv', 'links.csv');
  t.equal(r.code, 0, r.stderr);
  t.same(r.lines, [
    'skipped line 6 (csv-d): url "not a url" must be an absolute http or https URL',
    'skipped line 7 (csv-a): code csv-a is in use (by line 2 (csv-a) of this file)',
    'imported 4, skipped 2',
  ]);
  const a = await details('csv-a');
  t.match(a, { url: 'https://example.com/a', created_at: '2024-05-01T12:00:00.000Z', expires_at: null });
  const items = (await server.get('/api/links?limit=100', { key: alice.key })).json.items as Array<Record<string, string>>;
  t.equal(items.length, before + 4);
  const b = items.filter((i) => i.url === 'https://example.com/b');
  t.equal(b.length, 2, 'two rows, two links');
  for (const link of b) {
    t.match(link.short_code, /^[0-9A-Za-z]{7}$/, 'a pool code');
    t.equal(link.created_at, '2024-05-02T12:00:00.000Z');
    t.equal(link.expires_at, '2099-01-01T00:00:00.000Z');
  }
  const c = items.find((i) => i.url === 'https://example.com/c')!;
  t.ok(Date.now() - Date.parse(c.created_at) < 60_000, 'no created_at: created now');
  const again = await importFile('csv', 'links.csv');
  t.same(again.lines, [
    'skipped line 2 (csv-a): already imported',
    'skipped line 3: already imported',
    'skipped line 4: already imported',
    'skipped line 5: already imported',
    'skipped line 6 (csv-d): url "not a url" must be an absolute http or https URL',
    'skipped line 7 (csv-a): code csv-a is in use',
    'imported 0, skipped 6',
  ]);
  t.equal((await server.get('/api/links?limit=100', { key: alice.key })).json.items.length, before + 4, 'nothing twice');
  t.equal((await server.post('/api/shorten', { key: alice.key, json: { url: 'https://example.com/after' } })).status, 201, 'imports do not trip the anomaly detector');
});

t.test("perch's own CSV export reads back, but not a link that had a password; a file's control characters are not printed", async (t) => {
  const carol = await server.keygen('carol');
  t.equal(await create(server, carol, 'https://carol.example/open', { alias: 'carol-open' }), 'carol-open');
  const guarded = await server.post('/api/shorten', { key: carol.key, json: { url: 'https://carol.example/secret', alias: 'carol-secret', password: 'hunter22' } });
  t.equal(guarded.status, 201);
  const exported = await server.get('/api/links/export?format=csv', { key: carol.key });
  t.equal(exported.status, 200);
  const file = join(server.dataDir, 'carol-export.csv');
  writeFileSync(file, exported.text);
  const lines = exported.text.trim().split(/\r?\n/);
  const secretLine = lines.findIndex((l) => l.startsWith('carol-secret,')) + 1;
  t.ok(secretLine > 1 && lines[secretLine - 1].includes(',true,'), 'the export marks the protected link');

  const r = await server.cli(['import', 'csv', file, '--user', 'bob']);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, `skipped line ${secretLine} (carol-secret): protected by a password, which the export does not hold\n`);
  const bobs = (await server.get('/api/links?limit=100', { key: bob.key })).json.items as Array<Record<string, string>>;
  t.notOk(bobs.some((l) => l.url === 'https://carol.example/secret'), 'the target behind the password is not opened by an import');
  t.match(r.stdout, /skipped line \d+ \(carol-open\): code carol-open is in use\n/, "the open link is read (here its code is carol's already)");
  const redirect = await fetch(`${server.url}/carol-secret`, { redirect: 'manual' });
  t.equal(redirect.status, 200, "carol's link still asks for its password");

  const hostile = join(server.dataDir, 'hostile.json');
  writeFileSync(hostile, JSON.stringify({ total: 1, data: [{ id: 'x', address: 'ok1\u001b[2J\u001b[31mFAKE: imported 999, skipped 0\u001b[0m', target: 'not a url', password: false, visit_count: 0, created_at: '2024-01-01T00:00:00Z' }] }));
  const h = await server.cli(['import', 'kutt', hostile, '--user', 'bob']);
  t.equal(h.code, 0, h.stderr);
  t.notOk(h.stdout.includes('\u001b'), 'no escape character reaches the terminal');
  t.match(h.stdout, /skipped entry 1 \(ok1\\u001b\[2J\\u001b\[31mFAKE: imported 999, skipped 0\\u001b\[0m\): /, 'the code shown with its control characters escaped');
  t.match(h.stdout, /imported 0, skipped 1\n$/);

  // A file that is not JSON: the parser's message quotes the file, escape sequences included.
  writeFileSync(hostile, '{"data":[\u001b[2J\u001b[31mFAKE');
  const broken = await server.cli(['import', 'kutt', hostile, '--user', 'bob']);
  t.equal(broken.code, 2);
  t.notOk(broken.stderr.includes('\u001b'), 'no escape character in the error either');
  t.match(broken.stderr, /^perch: .*\n$/, 'one line');
});

t.test('a large file reports its progress; bad input exits with one line', async (t) => {
  const file = join(server.dataDir, 'large.csv');
  const rows = ['url,created_at'];
  for (let i = 0; i < 6000; i++) rows.push(`https://example.com/bulk/${i},2024-01-01T00:00:00Z`);
  writeFileSync(file, rows.join('\n'));
  const r = await server.cli(['import', 'csv', file, '--user', '@alice']);
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stdout, 'imported 6000, skipped 0\n');
  t.match(r.stderr, /checked 6000 of 6000 entries\n/);
  t.match(r.stderr, /written 6000 of 6000 entries\n/);
  const again = await server.cli(['import', 'csv', file, '--user', 'alice']);
  t.match(again.stdout, /imported 0, skipped 6000\n$/);

  const noUser = await server.cli(['import', 'csv', file, '--user', 'nobody']);
  t.equal(noUser.code, 2, 'a bad value exits 2');
  t.match(noUser.stderr, /perch: no user nobody\n$/);
  const wrongShape = await server.cli(['import', 'kutt', join(FIXTURES, 'shlink.json'), '--user', 'alice']);
  t.equal(wrongShape.code, 2, 'a file of another format is a bad value');
  t.match(wrongShape.stderr, /is not a kutt export: not a Kutt links page/);
  const badFormat = await server.cli(['import', 'bitly', file, '--user', 'alice']);
  t.equal(badFormat.code, 2);
  t.equal(badFormat.stderr.split('\n').length, 2, 'one line');
  const noFile = await server.cli(['import', 'csv', join(server.dataDir, 'missing.csv'), '--user', 'alice']);
  t.equal(noFile.code, 2, 'so is a file that cannot be read');
  t.match(noFile.stderr, /cannot read .*missing\.csv: ENOENT/);
});

commandTest('a dry run on data of an older schema refuses, and migrates nothing', async (t) => {
  const dir = tempDataDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  t.equal((await runCli(['keygen', '--user', 'alice', '--data', dir])).code, 0);
  // The data as an older perch left it: its newest migration not applied yet.
  const db = new Database(join(dir, 'perch.db'));
  const newest = (db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number }).v;
  db.prepare('DELETE FROM schema_migrations WHERE version = ?').run(newest);
  db.close();
  const dry = await runCli(['import', 'yourls', join(FIXTURES, 'yourls.csv'), '--user', 'alice', '--dry-run', '--data', dir]);
  t.equal(dry.code, 2);
  t.equal(dry.stderr.trim().split('\n').pop(), `perch: the data in ${dir} has an older schema: run perch migrate first (a dry run writes nothing, migrations included)`);
  const after = new Database(join(dir, 'perch.db'), { readonly: true });
  t.equal((after.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number }).v, newest - 1, 'nothing was migrated');
  after.close();
});
