// Runs `perch bench` as a user would, for the bench tests: its exit code, what it printed, and
// the figures it wrote with --json.
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { PERCH, cleanEnv, tempDataDir, untraced } from './server';

export interface BenchRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** One object per scenario, as written to --json (empty when it wrote nothing). */
  entries: Array<Record<string, any>>;
}

/** `perch bench <args> --json <file>`, node started with `nodeFlags` and `extraEnv`; bounded by `timeoutMs`. */
export function runBench(args: string[], timeoutMs: number, nodeFlags: readonly string[] = [], extraEnv: NodeJS.ProcessEnv = {}): Promise<BenchRun> {
  const dir = tempDataDir('perch-bench-test-');
  const json = join(dir, 'figures.json');
  return new Promise((resolve) => {
    const env = { ...cleanEnv(), ...extraEnv };
    const command = untraced([process.execPath, ...nodeFlags, PERCH, 'bench', ...args, '--json', json], env);
    execFile(command[0], command.slice(1), { env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code: unknown = err ? (err as unknown as { code: unknown }).code : 0;
      let entries: Array<Record<string, any>> = [];
      try {
        entries = JSON.parse(readFileSync(json, 'utf8')) as Array<Record<string, any>>;
      } catch {
        entries = [];
      }
      rmSync(dir, { recursive: true, force: true });
      resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr, entries });
    });
  });
}

/** The table's header line, as `perch bench` prints it at the end. */
export const TABLE_HEADER = /^scenario\s+measure\s+req\/s\s+p50 ms\s+p99 ms\s+errors\s+baseline req\/s\s+ratio\s+goal\s+met\s+peak RSS MiB\s+peak anon MiB$/m;
