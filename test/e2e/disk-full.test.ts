// Writes on a full disk: the server runs in a mount namespace of its own where its whole data
// directory is a small tmpfs, which the test fills to the last byte (through /proc/<pid>/root,
// which looks into that namespace). Posts, likes, follows and link creations then answer 503
// with Retry-After, never 500, and commit nothing; reads keep working; a log line says the disk is
// full and /metrics counts the refused writes; once there is room again, writes work.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, startServer, tempDataDir, type Key, type TestServer } from '../helpers/server';
import { logLine } from '../helpers/logs';

const TMPFS_BYTES = 8 * 1024 * 1024;

/**
 * Mounts a tmpfs on `mount` in a new user and mount namespace, copies the prepared data directory
 * into it, then runs the server on it.
 */
function launcher(mount: string, prepared: string): string[] {
  const script = `mount -t tmpfs -o size=${TMPFS_BYTES} perch-test "$0" && cp -a "$1"/. "$0"/ && shift && exec "$@"`;
  return ['unshare', '--user', '--map-root-user', '--mount', 'sh', '-c', script, mount, prepared];
}

function canMountTmpfs(dir: string): string | null {
  try {
    execFileSync('unshare', ['--user', '--map-root-user', '--mount', 'sh', '-c', `mount -t tmpfs -o size=65536 perch-test "${dir}"`], { stdio: 'pipe', timeout: 10_000 });
    return null;
  } catch (err) {
    const e = err as { stderr?: Buffer; message: string };
    return (e.stderr?.toString().trim() || e.message).split('\n')[0];
  }
}

/** Writes zeros into `file` until the file system has not a byte left. */
function fillUp(file: string): void {
  const fd = openSync(file, 'w');
  try {
    for (let chunk = 1 << 20; chunk >= 1; ) {
      try {
        writeSync(fd, Buffer.alloc(chunk));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
        chunk >>= 1;
      }
    }
  } finally {
    closeSync(fd);
  }
}

const base = tempDataDir('perch-disk-full-');
const prepared = join(base, 'prepared');
const mount = join(base, 'data');
mkdirSync(mount);
t.teardown(() => rmSync(base, { recursive: true, force: true }));
const refused = canMountTmpfs(mount);

t.test('a full disk answers writes 503, reads keep working, and writes come back with room', { skip: refused ? `cannot mount a tmpfs here: ${refused}` : false }, async (t) => {
  const keys: Record<string, Key> = {};
  for (const handle of ['writer', 'fan']) {
    const r = await runCli(['keygen', '--user', handle, '--json', '--data', prepared]);
    t.equal(r.code, 0, r.stderr);
    keys[handle] = JSON.parse(r.stdout) as Key;
  }
  // Settings through the environment: a config file in the data directory would be hidden by the mount.
  const env = { PERCH_LINKS_POOL_TARGET: '200', PERCH_LINKS_POOL_LOW_WATER: '50', PERCH_LOG_LEVEL: 'info' };
  const server: TestServer = await startServer({ dataDir: mount, launcher: launcher(mount, prepared), env });
  t.teardown(() => server.close());
  const { writer, fan } = keys;
  const post = (text: string) => server.post('/api/posts', { key: writer.key, json: { text } });
  const before = await post('made while there was room');
  t.equal(before.status, 201);
  const link = await server.post('/api/shorten', { key: writer.key, json: { url: 'https://example.com/before' } });
  t.equal(link.status, 201);

  const filler = `/proc/${server.proc.pid}/root${mount}/filler`;
  fillUp(filler);

  // Write until SQLite needs room it cannot get: every answer is a 201 (room left in pages the
  // store already has) or a 503 with Retry-After, never a 500.
  const statuses = new Map<number, number>();
  let refusal: { status: number; json: any; headers: Headers } | undefined;
  for (let i = 0; i < 400 && !refusal; i++) {
    const r = await post(`written on a full disk, number ${i}, with enough text to need new pages soon ${'x'.repeat(200)}`);
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    if (r.status !== 201) refusal = r;
  }
  t.ok(refusal, `a post was refused once the disk filled (${[...statuses].map(([s, n]) => `${n}× ${s}`).join(', ')})`);
  t.equal(refusal?.status, 503);
  t.equal(refusal?.json.error, 'unavailable');
  t.ok(Number(refusal?.headers.get('retry-after')) >= 1, 'Retry-After');
  t.match(refusal?.json.message, /disk/);
  t.notOk(statuses.has(500), 'never a 500');
  for (const [what, r] of [
    ['a like', await server.post(`/api/posts/${before.json.id}/like`, { key: fan.key })],
    ['a follow', await server.post(`/api/users/${writer.user_id}/follow`, { key: fan.key })],
    ['a link', await server.post('/api/shorten', { key: writer.key, json: { url: 'https://example.com/full' } })],
  ] as const) {
    t.equal(r.status, 503, `${what} is refused with 503: ${r.text}`);
    t.ok(Number(r.headers.get('retry-after')) >= 1, `${what}: Retry-After`);
  }
  t.match(await logLine(server, (l) => l.includes('"msg":"disk full"')), /"msg":"disk full"/, 'a log line says the disk is full');
  t.match((await server.get('/metrics')).text, /^perch_writes_disk_full_total [1-9]\d*$/m);

  // Reads keep working.
  t.equal((await server.get(`/api/posts/${before.json.id}`)).status, 200);
  t.equal((await server.get('/api/timeline', { key: writer.key })).status, 200);
  const redirect = await fetch(`${server.url}/${link.json.short_code}`, { redirect: 'manual' });
  t.equal(redirect.status, 302);
  t.equal((await server.get('/healthz')).status, 200);

  // Room again: writes work.
  rmSync(filler);
  const after = await post('made once there was room again');
  t.equal(after.status, 201, after.text);
  t.equal((await server.post(`/api/posts/${after.json.id}/like`, { key: fan.key })).status, 204);
  t.equal((await server.post('/api/shorten', { key: writer.key, json: { url: 'https://example.com/after' } })).status, 201);
  const listed = (await server.get(`/api/users/${writer.user_id}/posts?limit=100`)).json.items.map((p: any) => p.id);
  t.ok(listed.includes(after.json.id) && listed.includes(before.json.id), 'both posts are there');
  t.notOk(listed.some((id: string) => id === refusal?.json?.id), 'nothing of the refused post');
});
