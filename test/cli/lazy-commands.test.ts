// The program loads a command's module when that command runs: `perch --help`, `--version` and
// the short commands (keygen, keys, status, ...) do not load the server, which takes most of a
// short command's time to start; and building the program loads no store and no schema, so
// `--help`, `--version` and a mistyped flag answer at once.
import t from 'tap';
import { execFileSync } from 'node:child_process';

/** Every module loaded after `main.ts` is required and `code` ran, in a fresh process. */
function allLoadedBy(code: string): string[] {
  const script = `
    process.on('unhandledRejection', () => {});
    const main = require(${JSON.stringify(require.resolve('../../src/cli/main'))});
    ${code}
    process.stdout.write(JSON.stringify(Object.keys(require.cache)));`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as string[];
}

/** The project's own modules among them. */
function loadedBy(code: string): string[] {
  return allLoadedBy(code).filter((f) => !f.includes('node_modules'));
}

const named = (files: string[], tail: string) => files.some((f) => f.endsWith(tail));

t.test('building the program loads no command and no server', async (t) => {
  const files = loadedBy('main.buildProgram();');
  t.notOk(named(files, '/server/supervisor.js'), 'not the supervisor');
  t.notOk(named(files, '/capabilities.js'), 'not the capabilities');
  for (const command of ['serve', 'keys', 'status', 'backup', 'import']) t.notOk(named(files, `/cli/${command}.js`), `not cli/${command}`);
});

t.test('building the program loads neither the configuration, its schema library, nor a store', async (t) => {
  const files = allLoadedBy('main.buildProgram();');
  for (const pkg of ['zod', 'better-sqlite3', 'lmdb']) t.notOk(files.some((f) => f.includes(`/node_modules/${pkg}/`)), `not ${pkg}`);
  t.notOk(named(files, '/src/config.js'), 'not config.ts');
  t.notOk(named(files, '/cli/common.js'), "not the commands' shared data directory code");
});

t.test("a command's module is loaded when it runs", async (t) => {
  const files = loadedBy(`
    const program = main.buildProgram();
    program.exitOverride();
    try { program.parse(['node', 'perch', 'keys', 'list', '--data', '/nonexistent-perch-dir']); } catch {}`);
  t.ok(named(files, '/cli/keys.js'), 'cli/keys');
  t.notOk(named(files, '/server/supervisor.js'), 'and not the supervisor');
});
