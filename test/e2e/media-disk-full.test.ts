// POST /api/media on a full disk: the server runs in a mount namespace of its own where the data
// directory's media/ is a 512 KiB tmpfs. An upload that does not fit answers 503 with Retry-After
// and leaves no row, no file and no temporary file; once there is room again, uploads work.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startServer, tempDataDir } from '../helpers/server';
import { logLine } from '../helpers/logs';

const TMPFS_BYTES = 512 * 1024;

/** A launcher that mounts a small tmpfs on `dir` in a new user and mount namespace, then execs. */
function tmpfsLauncher(dir: string): string[] {
  const script = `mount -t tmpfs -o size=${TMPFS_BYTES} perch-test "$0" && exec "$@"`;
  return ['unshare', '--user', '--map-root-user', '--mount', 'sh', '-c', script, dir];
}

function canMountTmpfs(dir: string): string | null {
  try {
    execFileSync(tmpfsLauncher(dir)[0], [...tmpfsLauncher(dir).slice(1), 'true'], { stdio: 'pipe', timeout: 10_000 });
    return null;
  } catch (err) {
    const e = err as { stderr?: Buffer; message: string };
    return (e.stderr?.toString().trim() || e.message).split('\n')[0];
  }
}

function png(size: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = (i * 7919) % 256;
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b);
  return b;
}

const dataDir = tempDataDir();
const mediaDir = join(dataDir, 'media');
mkdirSync(mediaDir);
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
const refused = canMountTmpfs(mediaDir);

t.test('an upload larger than the free space answers 503 and leaves nothing behind', { skip: refused ? `cannot mount a tmpfs here: ${refused}` : false }, async (t) => {
  const server = await startServer({ dataDir, launcher: tmpfsLauncher(mediaDir) });
  t.teardown(() => server.close());
  const user = await server.keygen('full');
  // The tmpfs is only visible in the server's mount namespace; /proc/<pid>/root looks through it.
  const mediaSeenByServer = `/proc/${server.proc.pid}/root${mediaDir}`;
  const mediaRows = () => {
    const db = new Database(join(dataDir, 'perch.db'), { readonly: true, fileMustExist: true });
    try {
      return (db.prepare('SELECT COUNT(*) AS n FROM media').get() as { n: number }).n;
    } finally {
      db.close();
    }
  };

  const big = png(1024 * 1024);
  const r = await server.post('/api/media', { key: user.key, body: big, headers: { 'content-type': 'image/png' } });
  t.equal(r.status, 503, `a 1 MiB upload into 512 KiB is refused: ${r.text}`);
  t.equal(r.json?.error, 'unavailable');
  t.equal(r.json?.retry_after_seconds, 30);
  t.equal(r.headers.get('retry-after'), '30');
  t.match(r.json?.message, /disk/);
  t.same(readdirSync(mediaSeenByServer), [], 'no file and no <id>.tmp');
  t.equal(mediaRows(), 0, 'no row');
  const line = await logLine(server, (l) => l.includes('"msg":"disk full"'));
  t.match(line, /"what":"media upload","code":"ENOSPC"/, 'a log line says the disk is full');

  const small = png(100 * 1024);
  const ok = await server.post('/api/media', { key: user.key, body: small, headers: { 'content-type': 'image/png' } });
  t.equal(ok.status, 201, 'an upload that fits works: the failed one gave its space back');
  t.equal(ok.json.size, small.length);
  const got = await fetch(server.url + ok.json.url);
  t.same(Buffer.from(await got.arrayBuffer()), small, 'served whole');
  t.same(readdirSync(mediaSeenByServer), [ok.json.id]);
  t.equal(mediaRows(), 1);
});
