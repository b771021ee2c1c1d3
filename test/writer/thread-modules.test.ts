// The writer thread (with two HTTP threads or more) takes the capabilities' operations, jobs and
// signals, and serves no route: what it loads must not bring the request schemas' zod, which costs
// each thread that loads it start-up time and heap. Checked in a process of its own, loading what
// the writer thread's entry requires, with the capability that made its HTTP part as a control.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const WRITER_DIR = join(__dirname, '..', '..', 'src', 'writer');

/** The modules (absolute paths) a fresh process holds after requiring `files`, then running `then`. */
function loadedAfter(files: string[], then = ''): string[] {
  const script = `for (const f of ${JSON.stringify(files)}) require(f); ${then}; process.stdout.write(JSON.stringify(Object.keys(require.cache)));`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as string[];
}

/** The project's own modules the compiled writer thread's entry requires. */
function writerEntryRequires(): string[] {
  const entry = readFileSync(join(WRITER_DIR, 'thread.js'), 'utf8');
  return [...entry.matchAll(/require\("(\.{1,2}\/[^"]+)"\)/g)].map((m) => join(WRITER_DIR, m[1]));
}

const isZod = (f: string) => f.includes('/node_modules/zod/');

t.test("what the writer thread loads brings no zod", async (t) => {
  const files = writerEntryRequires();
  t.ok(files.some((f) => f.endsWith('capabilities')), 'the entry requires the capabilities');
  const loaded = loadedAfter(files, `require(${JSON.stringify(join(WRITER_DIR, '..', 'capabilities'))}).writerSetup()`);
  t.ok(loaded.some((f) => f.endsWith('/src/social/module.js')), 'the capabilities were loaded');
  t.same(loaded.filter(isZod), [], 'no module of zod');
  t.same(
    loaded.filter((f) => /\/src\/[a-z]+\/(routes|schema)\.js$/.test(f) && !/\/src\/(accounts|media|web)\//.test(f)),
    [],
    'no routes or schemas of the capabilities that validate requests with zod',
  );
});

t.test('the control: an HTTP thread making the social routes loads zod', async (t) => {
  const loaded = loadedAfter([join(WRITER_DIR, '..', 'social', 'routes.js')]);
  t.ok(loaded.some(isZod), 'the routes bring zod');
});
