// The deployment files: the systemd units pass `systemd-analyze verify` (where the tool exists),
// and the Containerfile builds from paths that exist and runs Node 20 as an unprivileged user.
import t from 'tap';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/server';
import { SERVE_ENVIRONMENT, SERVE_NODE_FLAGS } from '../../src/server/node-flags';

const UNITS = join(ROOT, 'deploy', 'systemd');

function which(tool: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(':')) if (dir && existsSync(join(dir, tool))) return join(dir, tool);
  return null;
}

const tool = which('systemd-analyze');
t.test('systemd-analyze verify accepts the units', { skip: tool ? false : 'systemd-analyze is not installed here: the units are not verified' }, async (t) => {
  // verify checks that ExecStart's program exists: where node is not /usr/bin/node, the copy
  // names the node that runs this test instead.
  const dir = mkdtempSync(join(tmpdir(), 'perch-units-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const files = readdirSync(UNITS).sort();
  t.same(files, ['perch-backup.service', 'perch-backup.timer', 'perch.service']);
  for (const f of files) {
    let text = readFileSync(join(UNITS, f), 'utf8');
    if (!existsSync('/usr/bin/node')) text = text.replaceAll('/usr/bin/node', process.execPath);
    writeFileSync(join(dir, f), text);
  }
  for (const f of files) {
    const r = await new Promise<{ code: number; stderr: string }>((resolve) =>
      execFile(tool!, ['verify', join(dir, f)], { timeout: 60_000 }, (err, _stdout, stderr) => resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stderr })),
    );
    t.equal(r.code, 0, `${f}: exit 0`);
    t.equal(r.stderr, '', `${f}: no warnings`);
  }
});

t.test('the service unit is hardened and keeps the data directory in its state directory', async (t) => {
  const unit = readFileSync(join(UNITS, 'perch.service'), 'utf8');
  const settings = new Map<string, string[]>();
  for (const line of unit.split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (m) settings.set(m[1], [...(settings.get(m[1]) ?? []), m[2]]);
  }
  const one = (k: string) => settings.get(k)?.[0];
  t.equal(one('DynamicUser'), 'yes');
  t.equal(one('StateDirectory'), 'perch');
  t.equal(one('StateDirectoryMode'), '0700');
  t.equal(one('ProtectSystem'), 'strict');
  t.equal(one('NoNewPrivileges'), 'yes');
  t.equal(one('Restart'), 'on-failure');
  t.equal(one('CapabilityBoundingSet'), '');
  t.ok(settings.get('Environment')?.includes('PERCH_DATA=%S/perch'), 'the data directory is the state directory');
  t.equal(one('ExecStart'), `/usr/bin/node ${SERVE_NODE_FLAGS.join(' ')} /opt/perch/bin/perch serve`, 'started with the flags perch serve is meant to run with');
  for (const [name, value] of Object.entries(SERVE_ENVIRONMENT)) {
    t.ok(settings.get('Environment')?.includes(`${name}=${value}`), `started with ${name}=${value}`);
  }
  t.notOk(settings.has('MemoryDenyWriteExecute'), 'V8 needs writable executable memory');
  t.match(unit, /^Environment='PERCH_SERVER_TRUSTED_PROXIES=\["127\.0\.0\.1","::1"\]'$/m, 'JSON quoted so systemd leaves its quotes alone');
});

t.test('the Containerfile: multi-stage, Node 20, non-root, copying what exists', async (t) => {
  const file = readFileSync(join(ROOT, 'deploy', 'Containerfile'), 'utf8');
  const froms = [...file.matchAll(/^FROM (\S+)(?: AS (\w+))?$/gm)].map((m) => m[1]);
  t.same(froms, ['docker.io/library/node:20-bookworm-slim', 'docker.io/library/node:20-bookworm-slim'], 'two stages on Node 20 (Debian 12: glibc 2.36)');
  t.match(file, /^USER node$/m);
  t.ok(file.indexOf('USER node') > file.lastIndexOf('FROM '), 'the runtime stage runs unprivileged');
  for (const m of file.matchAll(/^COPY (?!--from)(.+) \S+$/gm)) {
    for (const src of m[1].split(' ')) t.ok(existsSync(join(ROOT, src)), `COPY ${src} exists`);
  }
  // What the runtime stage takes from the build: the paths the build makes.
  for (const m of file.matchAll(/^COPY --from=build \/src\/(\S+)(?: \/src\/(\S+))? \S+$/gm)) {
    for (const p of [m[1], m[2]].filter(Boolean)) t.ok(['package.json', 'package-lock.json', 'node_modules', 'bin', 'config', 'dist/src', 'dist/web'].includes(p!), p!);
  }
  t.ok(existsSync(join(ROOT, 'dist', 'src', 'cli', 'main.js')) && existsSync(join(ROOT, 'dist', 'web')), 'npm run build makes dist/src and dist/web');
  t.match(file, /^CMD \["serve"\]$/m);
  const ignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n');
  for (const p of ['node_modules', 'dist', 'data']) t.ok(ignore.includes(p), `.dockerignore leaves out ${p}`);
});
