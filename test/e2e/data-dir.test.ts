// A data directory that cannot be made: the command says so in one line and exits 1, at once.
// Under /proc, Node's recursive mkdir never returns (mkdir answers ENOENT for a parent that
// exists, and it retries), so each run is bounded and a run that had to be killed fails.
import { execFile } from 'node:child_process';
import { commandTest } from '../helpers/command-test';
import { PERCH, cleanEnv, untraced } from '../helpers/server';

const env = cleanEnv();

function run(args: string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve) => {
    const command = untraced([process.execPath, PERCH, ...args], env);
    const child = execFile(command[0], command.slice(1), { env, timeout: 10_000, killSignal: 'SIGKILL' }, (_err, _stdout, stderr) => {
      resolve({ code: child.exitCode, signal: child.signalCode, stderr });
    });
  });
}

for (const [label, args, dir] of [
  ['serve', ['serve', '--port', '0', '--data', '/proc/nope'], '/proc/nope'],
  ['serve, deeper', ['serve', '--port', '0', '--data', '/proc/nope/deeper/still'], '/proc/nope/deeper/still'],
  ['keygen', ['keygen', '--user', 'alice', '--data', '/proc/nope'], '/proc/nope'],
  ['migrate', ['migrate', '--data', '/proc/nope'], '/proc/nope'],
] as const) {
  commandTest(`${label} with --data ${dir}: "not usable", exit 1`, async (t) => {
    const r = await run([...args]);
    t.equal(r.signal, null, 'it ended on its own (not killed after 10 s)');
    t.equal(r.code, 1);
    t.equal(r.stderr, `perch: data directory ${dir} is not usable: ENOENT\n`);
  });
}
