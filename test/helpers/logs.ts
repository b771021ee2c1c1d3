// Log lines of a test server arrive on its stdout independently of its HTTP answers: a test that
// looks for the line a request caused waits for it (bounded) instead of assuming it is there.
import type { TestServer } from './server';

/** The first log line that matches, waiting up to `ms` for it; undefined when none came. */
export async function logLine(server: TestServer, matches: (line: string) => boolean, ms = 10_000): Promise<string | undefined> {
  const deadline = Date.now() + ms;
  for (;;) {
    const line = server.logs.find(matches);
    if (line !== undefined || Date.now() > deadline) return line;
    await new Promise((r) => setTimeout(r, 20));
  }
}
