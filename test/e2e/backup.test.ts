// perch backup and perch restore: a snapshot taken while the server takes writes holds every
// post and link acknowledged before it started; a restored data directory redirects every link
// and reads every timeline as the original does; and what must not be touched is not.
import t from 'tap';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { runCli, startServer, tempDataDir, type Key, type TestServer } from '../helpers/server';
import { commandTest } from '../helpers/command-test';
import { createPost } from '../social/helpers';

const dirs: string[] = [];
function dir(): string {
  const d = tempDataDir('perch-backup-');
  dirs.push(d);
  return d;
}
t.teardown(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

// Creation as fast as the server takes it: no limit or spam flag gets in the way.
const config = {
  // One origin for both servers, so that the short URLs in their answers compare equal.
  server: { public_origin: 'https://sho.rt' },
  limits: { shorten: { capacity: 1_000_000, refill_per_second: 100_000, burst_per_second: 1_000_000, daily_quota: 10_000_000 } },
  anomaly: { max_links: 1_000_000, max_same_domain: 1_000_000 },
};
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(3000, 9)]);

interface Acked {
  posts: Array<{ id: string; text: string }>;
  links: Array<{ code: string; url: string }>;
}

/** Writes posts and links in a loop until stopped, recording each once its 201 arrived. */
function startWriters(server: TestServer, keys: Key[], acked: Acked): () => Promise<void> {
  let running = true;
  let n = 0;
  const loops = keys.flatMap((key) => [
    (async () => {
      while (running) {
        const text = `post ${n++} by ${key.handle}`;
        const r = await server.post('/api/posts', { key: key.key, json: { text } });
        if (r.status !== 201) throw new Error(`post: ${r.status} ${r.text}`);
        acked.posts.push({ id: r.json.id, text });
      }
    })(),
    (async () => {
      while (running) {
        const url = `https://example.com/${key.handle}/${n++}`;
        const r = await server.post('/api/shorten', { key: key.key, json: { url } });
        if (r.status !== 201) throw new Error(`shorten: ${r.status} ${r.text}`);
        acked.links.push({ code: r.json.short_code, url });
      }
    })(),
  ]);
  return async () => {
    running = false;
    await Promise.all(loops);
  };
}

async function pages(server: TestServer, path: string, key?: string): Promise<string[]> {
  const bodies: string[] = [];
  let cursor: string | null = null;
  do {
    const r = await server.get(cursor === null ? `${path}?limit=100` : `${path}?limit=100&cursor=${encodeURIComponent(cursor)}`, { key });
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.text}`);
    bodies.push(r.text);
    cursor = r.json.next_cursor;
  } while (cursor !== null);
  return bodies;
}

function mode(path: string): string {
  return (statSync(path).mode & 0o777).toString(8);
}

t.test('a backup under writes has everything acknowledged before it started; the restored copy serves it all', async (t) => {
  const source = dir();
  const server = await startServer({ dataDir: source, config });
  t.teardown(() => server.close());
  const alice = await server.keygen('alice');
  const bob = await server.keygen('bob');
  t.equal((await server.post(`/api/users/${alice.user_id}/follow`, { key: bob.key })).status, 200);
  t.equal((await server.post(`/api/users/${bob.user_id}/follow`, { key: alice.key })).status, 200);
  const upload = await server.post('/api/media', { key: alice.key, body: PNG, headers: { 'content-type': 'image/png' } });
  t.equal(upload.status, 201);
  const withMedia = await createPost(server, alice.key, 'a picture', { media_ids: [upload.json.id] });
  await server.post(`/api/posts/${withMedia.id}/like`, { key: bob.key });

  const acked: Acked = { posts: [], links: [] };
  const stop = startWriters(server, [alice, bob], acked);
  // Let the writers get going, then take what has been acknowledged at the moment the backup starts.
  while (acked.posts.length < 40 || acked.links.length < 40) await new Promise((r) => setTimeout(r, 20));
  const before: Acked = { posts: [...acked.posts], links: [...acked.links] };
  const target = join(dir(), 'backup');
  const b = await server.cli(['backup', target, '--json']);
  const afterBackup = acked.posts.length + acked.links.length;
  await stop();
  t.equal(b.code, 0, b.stderr);
  t.equal(b.stderr, `data directory ${source}\n`);
  const printed = JSON.parse(b.stdout);
  t.ok(afterBackup > before.posts.length + before.links.length, `writes went on during the backup (${afterBackup - before.posts.length - before.links.length} more)`);

  const manifest = JSON.parse(readFileSync(join(target, 'manifest.json'), 'utf8'));
  t.same(printed, { backup: target, ...manifest }, '--json prints the manifest');
  t.equal(manifest.format, 1);
  t.equal(manifest.perch_version, require('../../../package.json').version);
  t.type(manifest.schema_version, 'number');
  t.ok(Math.abs(Date.parse(manifest.created_at) - Date.now()) < 600_000);
  t.equal(manifest.source_data_dir, source);
  t.ok(manifest.row_counts.posts >= before.posts.length + 1, `posts in the backup: ${manifest.row_counts.posts} ≥ ${before.posts.length + 1}`);
  t.ok(manifest.row_counts.links >= before.links.length, `links: ${manifest.row_counts.links} ≥ ${before.links.length}`);
  t.ok(manifest.row_counts.posts <= acked.posts.length + 1, 'and no post that was never made');
  t.equal(manifest.row_counts.users, 2);
  t.same(manifest.files, { count: 1, bytes: PNG.length, missing: [], deleted: [], sha256: { [`media/${upload.json.id}`]: createHash('sha256').update(PNG).digest('hex') } });
  t.match(manifest.not_included, /^lmdb\/ is not included/);
  t.same(readdirSync(target).sort(), ['manifest.json', 'media', 'perch.db'], 'no LMDB, no write-ahead log beside the database');
  t.equal(mode(target), '700');
  t.equal(mode(join(target, 'perch.db')), '600');
  t.equal(mode(join(target, 'media', upload.json.id)), '600');

  const restoredDir = join(dir(), 'restored');
  const r = await runCli(['restore', target, '--data', restoredDir]);
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stdout.split('\n')[0], `data directory ${restoredDir} (new)`);
  t.match(r.stdout, new RegExp(`^restored from\\s+${target}$`, 'm'));
  t.same(readdirSync(restoredDir).sort(), ['lmdb', 'lmdb-open.lock', 'media', 'perch.db']);
  const restored = await startServer({ dataDir: restoredDir, config });
  t.teardown(() => restored.close());

  let redirects = 0;
  for (const l of before.links) {
    const res = await restored.get(`/${l.code}`);
    if (res.status === 302 && res.headers.get('location') === l.url) redirects++;
    else t.fail(`link ${l.code}: ${res.status} ${res.headers.get('location')}`);
  }
  t.equal(redirects, before.links.length, `every link acknowledged before the backup redirects (${redirects})`);
  let readable = 0;
  for (const p of before.posts) {
    const res = await restored.get(`/api/posts/${p.id}`);
    if (res.status === 200 && res.json.text === p.text) readable++;
    else t.fail(`post ${p.id}: ${res.status}`);
  }
  t.equal(readable, before.posts.length, `every post acknowledged before the backup is there (${readable})`);
  const picture = await restored.get(`/api/posts/${withMedia.id}`);
  t.same([picture.json.media_ids, picture.json.like_count], [[upload.json.id], 1]);
  const file = await fetch(`${restored.url}/media/${upload.json.id}`);
  t.same(Buffer.from(await file.arrayBuffer()), PNG, 'the media file');
  t.equal((await restored.get('/api/me', { key: alice.key })).status, 200, 'keys work');

  // The same backup with its media file lost, then cut short: refused, nothing made.
  const media = join(target, 'media', upload.json.id);
  const lost = join(dir(), 'lost');
  rmSync(media);
  const withoutFile = await runCli(['restore', target, '--data', lost]);
  t.equal(withoutFile.code, 1);
  t.equal(withoutFile.stderr, `perch: the backup lacks 1 of its 1 files (media/${upload.json.id})\n`);
  t.notOk(existsSync(lost), 'no data directory was made');
  writeFileSync(media, PNG.subarray(0, 100));
  const cut = await runCli(['restore', target, '--data', lost]);
  t.equal(cut.code, 1);
  t.equal(cut.stderr, `perch: the backup's files are not the ones it wrote: 1 files of 100 bytes, its manifest says 1 of ${PNG.length}\n`);
  t.notOk(existsSync(lost), 'nor for a file cut short');

  // Changed in place, the same size: its hash tells.
  const altered = Buffer.from(PNG);
  altered[altered.length - 1] ^= 0xff;
  writeFileSync(media, altered);
  const changed = await runCli(['restore', target, '--data', lost]);
  t.equal(changed.code, 1);
  t.equal(changed.stderr, `perch: the backup's files are not the ones it wrote: 1 of 1 differ from their SHA-256 in the manifest (media/${upload.json.id})\n`);
  t.notOk(existsSync(lost), 'nor for a file changed');

  // As written again, with a file of someone else's beside it: restored, without that file.
  writeFileSync(media, PNG);
  writeFileSync(join(target, 'NOTES.txt'), 'mine');
  mkdirSync(join(target, 'media', 'extra'));
  writeFileSync(join(target, 'media', 'extra', 'x.png'), PNG);
  const clean = join(dir(), 'clean');
  const again = await runCli(['restore', target, '--data', clean]);
  t.equal(again.code, 0, again.stderr);
  t.ok(readFileSync(join(clean, 'media', upload.json.id)).equals(PNG), 'the file the database refers to');
  t.notOk(existsSync(join(clean, 'NOTES.txt')), 'a file perch did not write stays out of the data directory');
  t.notOk(existsSync(join(clean, 'media', 'extra')), 'in media/ too');
});

t.test('a quiet backup restores timelines, profiles and link lists exactly; the copy goes on from there', async (t) => {
  const source = dir();
  const server = await startServer({ dataDir: source, config, threads: 1 });
  t.teardown(() => server.close());
  const keys = [await server.keygen('ann'), await server.keygen('ben'), await server.keygen('cat')];
  const [ann, ben, cat] = keys;
  await server.post(`/api/users/${ann.user_id}/follow`, { key: ben.key });
  await server.post(`/api/users/${cat.user_id}/follow`, { key: ben.key });
  await server.post(`/api/users/${ben.user_id}/follow`, { key: ann.key });
  for (let i = 0; i < 200; i++) {
    const author = keys[i % 3];
    const post = await createPost(server, author.key, `post ${i}`);
    if (i % 7 === 0) await server.post(`/api/posts/${post.id}/like`, { key: keys[(i + 1) % 3].key });
    if (i % 11 === 0) await server.post('/api/shorten', { key: author.key, json: { url: `https://example.org/${i}` } });
  }
  // Unfollow after posts were fanned out: those posts must not come back in the copy either.
  await server.request('DELETE', `/api/users/${cat.user_id}/follow`, { key: ben.key });
  const lists = async (s: TestServer) => {
    const out: Record<string, string[]> = {};
    for (const k of keys) {
      out[`timeline ${k.handle}`] = await pages(s, '/api/timeline', k.key);
      out[`posts ${k.handle}`] = await pages(s, `/api/users/${k.user_id}/posts`);
      out[`links ${k.handle}`] = await pages(s, '/api/links', k.key);
      out[`followers ${k.handle}`] = await pages(s, `/api/users/${k.user_id}/followers`);
    }
    return out;
  };
  const original = await lists(server);
  t.ok(original['timeline ben'].length >= 2, `ben's timeline has ${original['timeline ben'].length} pages`);
  t.notOk(original['timeline ben'].join().includes(`"author_id":"${cat.user_id}"`), 'none of the unfollowed author\'s posts');
  const target = join(dir(), 'quiet');
  t.equal((await server.cli(['backup', target])).code, 0);
  const restoredDir = join(dir(), 'copy');
  t.equal((await runCli(['restore', target, '--data', restoredDir])).code, 0);
  const restored = await startServer({ dataDir: restoredDir, config });
  t.teardown(() => restored.close());
  t.same(await lists(restored), original, 'every page, byte for byte');

  const fresh = await createPost(restored, ann.key, 'after the restore');
  for (let i = 0; i < 200; i++) {
    const top = (await restored.get('/api/timeline?limit=1', { key: ben.key })).json.items[0];
    if (top?.id === fresh.id) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  const timeline = JSON.parse((await pages(restored, '/api/timeline', ben.key)).join('\n').split('\n')[0]);
  t.equal(timeline.items[0].id, fresh.id, 'a new post reaches a follower in the copy');
  const rest = (await pages(restored, '/api/timeline', ben.key)).flatMap((p) => JSON.parse(p).items.map((i: { id: string }) => i.id));
  const was = original['timeline ben'].flatMap((p) => JSON.parse(p).items.map((i: { id: string }) => i.id));
  t.same(rest, [fresh.id, ...was], 'and the timeline below it is the old one');
  const created = await restored.post('/api/shorten', { key: cat.key, json: { url: 'https://example.org/new' } });
  t.equal(created.status, 201, 'the code pool was filled again');
});

commandTest('a backup given as a data directory is refused by every command, and stays restorable', async (t) => {
  const d = dir();
  t.equal((await runCli(['keygen', '--user', 'alice', '--data', d])).code, 0);
  const backup = join(dir(), 'bk');
  t.equal((await runCli(['backup', backup, '--data', d])).code, 0);
  const before = readdirSync(backup).sort();
  const database = readFileSync(join(backup, 'perch.db'));
  const csv = join(dir(), 'links.csv');
  writeFileSync(csv, 'url\nhttps://example.com/\n');
  const commands = [
    ['status'],
    ['keys', 'list'],
    ['keygen', '--user', 'bob'],
    ['migrate'],
    ['reindex'],
    ['import', 'csv', csv, '--user', 'alice'],
    ['backup', join(dir(), 'bk2')],
    ['serve', '--port', '0'],
  ];
  for (const command of commands) {
    const r = await runCli([...command, '--data', backup]);
    t.equal(r.code, 2, `${command[0]}: refused as a usage error`);
    t.equal(
      r.stderr,
      `perch: ${backup} is a perch backup (it holds manifest.json), not a data directory: opening it would change it and it could no longer be restored; restore it into a data directory first (perch restore ${backup} --data NEW_DIR)\n`,
      `${command.join(' ')} says why and what to do`,
    );
  }
  t.same(readdirSync(backup).sort(), before, 'nothing added to the backup');
  t.ok(readFileSync(join(backup, 'perch.db')).equals(database), 'its database unchanged, byte for byte');
  const restored = await runCli(['restore', backup, '--data', join(dir(), 'restored')]);
  t.equal(restored.code, 0, restored.stderr);
});

commandTest('refusals: nothing is touched', async (t) => {
  const d = dir();
  t.equal((await runCli(['keygen', '--user', 'alice', '--data', d])).code, 0);
  const missing = join(dir(), 'none');
  const noData = await runCli(['backup', join(dir(), 'x'), '--data', missing]);
  t.equal(noData.code, 2, 'no data to back up');
  t.notOk(existsSync(missing));

  const busy = dir();
  writeFileSync(join(busy, 'keep.txt'), 'mine');
  const intoBusy = await runCli(['backup', busy, '--data', d]);
  t.equal(intoBusy.code, 1);
  t.equal(intoBusy.stderr, `perch: backup refused: ${busy} is not empty; a backup goes into a new or empty directory\n`);
  t.same(readdirSync(busy), ['keep.txt']);
  t.equal(readFileSync(join(busy, 'keep.txt'), 'utf8'), 'mine');

  // A symbolic link to nothing looks absent, but nothing can be made in its place.
  const links = dir();
  const dangling = join(links, 'link');
  symlinkSync(join(links, 'gone'), dangling);
  const viaLink = await runCli(['backup', dangling, '--data', d]);
  t.equal(viaLink.code, 1);
  t.equal(viaLink.stderr, `perch: backup refused: ${dangling} is a symbolic link to ${join(links, 'gone')}, which does not exist; make that directory first, or give the real path\n`);
  t.same(readdirSync(links), ['link'], 'nothing made');

  const empty = dir();
  t.equal((await runCli(['backup', empty, '--data', d])).code, 0, 'an empty directory is fine');
  const restoreViaLink = await runCli(['restore', empty, '--data', dangling]);
  t.equal(restoreViaLink.code, 1);
  t.equal(restoreViaLink.stderr, `perch: restore refused: ${dangling} is a symbolic link to ${join(links, 'gone')}, which does not exist; make that directory first, or give the real path; nothing was changed\n`);
  t.same(readdirSync(links), ['link'], 'nor by a restore');

  // A place where mkdir answers ENOENT although the parent exists (/proc): an error, not a hang in
  // Node's recursive mkdir, which retries that forever.
  const inProc = `/proc/perch-backup-${process.pid}`;
  const intoProc = await runCli(['backup', inProc, '--data', d]);
  t.equal(intoProc.code, 1);
  t.equal(intoProc.stderr, `perch: ENOENT: no such file or directory, mkdir '${inProc}'\n`);
  const restoreIntoProc = await runCli(['restore', empty, '--data', `${inProc}/data`]);
  t.equal(restoreIntoProc.code, 1);
  t.equal(restoreIntoProc.stderr, `perch: ENOENT: no such file or directory, mkdir '${inProc}'\n`);
  t.notOk(readdirSync(empty).some((f) => f.startsWith('.backup-in-progress-')), 'a finished backup leaves no marker');

  // A backup killed before its manifest (its marker names a pid no process has now): a retry into
  // the same directory clears it and goes on. With a live process's marker, it is still refused.
  const killed = dir();
  writeFileSync(join(killed, '.backup-in-progress-99999999'), '');
  writeFileSync(join(killed, 'perch.db.partial'), 'half a copy');
  const again = await runCli(['backup', killed, '--data', d]);
  t.equal(again.code, 0, `a retry: ${again.stderr}`);
  t.same(readdirSync(killed).filter((f) => f.endsWith('.partial') || f.startsWith('.backup-in-progress-')), [], 'nothing of the killed one is left');
  t.ok(existsSync(join(killed, 'manifest.json')));
  const running = dir();
  writeFileSync(join(running, '.backup-in-progress-1'), '');
  const beside = await runCli(['backup', running, '--data', d]);
  t.equal(beside.code, 1, "another process's backup in progress is not cleared");
  t.same(readdirSync(running), ['.backup-in-progress-1']);

  const occupied = dir();
  mkdirSync(join(occupied, 'lmdb'));
  writeFileSync(join(occupied, 'perch.db'), 'not yours');
  const intoOccupied = await runCli(['restore', empty, '--data', occupied]);
  t.equal(intoOccupied.code, 1);
  t.equal(intoOccupied.stderr, `perch: restore refused: ${occupied} is not empty; restore into an empty or absent data directory; nothing was changed\n`);
  t.same(readdirSync(occupied).sort(), ['lmdb', 'perch.db']);
  t.equal(readFileSync(join(occupied, 'perch.db'), 'utf8'), 'not yours');

  const notBackup = await runCli(['restore', d, '--data', join(dir(), 'y')]);
  t.equal(notBackup.code, 2);
  t.equal(notBackup.stderr, `perch: ${d} is not a perch backup (no manifest.json)\n`);

  const damaged = dir();
  t.equal((await runCli(['backup', join(damaged, 'b'), '--data', d])).code, 0);
  const db = readFileSync(join(damaged, 'b', 'perch.db'));
  db[db.length - 1] ^= 0xff;
  writeFileSync(join(damaged, 'b', 'perch.db'), db);
  const target = join(dir(), 'z');
  const bad = await runCli(['restore', join(damaged, 'b'), '--data', target]);
  t.equal(bad.code, 1);
  t.match(bad.stderr, /^perch: .*perch\.db is not the file the backup wrote \(its SHA-256 differs from the manifest's\)\n$/);
  t.notOk(existsSync(target), 'no data directory was made');
  t.same(readdirSync(join(target, '..')).filter((f) => f.includes('restoring')), [], 'nor anything beside it');

  const into = dir();
  const ok = await runCli(['restore', empty, '--data', into]);
  t.equal(ok.code, 0, `into an empty directory: ${ok.stderr}`);
  t.same(readdirSync(into).sort(), ['lmdb', 'lmdb-open.lock', 'perch.db']);
  t.equal(JSON.parse((await runCli(['keys', 'list', '--json', '--data', into])).stdout).length, 1);

  // A restore killed before it finished leaves its staging directory, named by its pid (one that
  // no process has now), inside an empty target or beside an absent one: a retry removes it.
  const retried = dir();
  mkdirSync(join(retried, '.restoring-99999999'));
  writeFileSync(join(retried, '.restoring-99999999', 'perch.db'), 'half a copy');
  const retry = await runCli(['restore', empty, '--data', retried]);
  t.equal(retry.code, 0, `a retry into the directory: ${retry.stderr}`);
  t.same(readdirSync(retried).sort(), ['lmdb', 'lmdb-open.lock', 'perch.db']);
  const parent = dir();
  mkdirSync(join(parent, '.data.restoring-99999999'));
  const retryBeside = await runCli(['restore', empty, '--data', join(parent, 'data')]);
  t.equal(retryBeside.code, 0, `a retry beside it: ${retryBeside.stderr}`);
  t.same(readdirSync(parent), ['data'], 'the one left beside it is gone');
});

t.test('an account flagged by the spam detector is still throttled in the restored copy', async (t) => {
  const strict = { anomaly: { max_links: 3, window_seconds: 10, max_same_domain: 100, domain_window_seconds: 60, cooloff_seconds: 600 } };
  const server = await startServer({ config: strict });
  t.teardown(() => server.close());
  const spammer = await server.keygen('spammer');
  for (let i = 0; i < 4; i++) await server.post('/api/shorten', { key: spammer.key, json: { url: `https://s${i}.example/` } });
  let flagged = false;
  for (let i = 0; i < 200 && !flagged; i++) {
    flagged = JSON.parse((await server.cli(['flags', 'list', '--json'])).stdout).some((f: { handle: string }) => f.handle === 'spammer');
    if (!flagged) await new Promise((r) => setTimeout(r, 50));
  }
  t.ok(flagged, 'flagged');
  const target = join(dir(), 'b');
  t.equal((await server.cli(['backup', target])).code, 0);
  const copy = join(dir(), 'copy');
  t.equal((await runCli(['restore', target, '--data', copy])).code, 0);
  const restored = await startServer({ dataDir: copy, config: strict });
  t.teardown(() => restored.close());
  const r = await restored.post('/api/shorten', { key: spammer.key, json: { url: 'https://fine.example/' } });
  t.equal(r.status, 429);
  t.equal(r.json.limit, 'anomaly', 'the flag came back with the restore');
});
