// Tests that do the same work in both passes of the suite run in the one-thread pass only. The
// whole suite runs the end-to-end tests twice, with one HTTP thread per test server and with two
// (scripts/run-tests.js), so that what depends on the thread count is tested at both; files whose
// every test does the same work at both are listed there and run in the first pass only.
//
// - commandTest: perch's commands alone, which boot no server (commands run by runCli get none of
//   the suite's settings). startServer refuses to boot a server inside one.
// - pinnedThreadsTest: every server it boots has a thread count of its own (`threads: 1` or `2`,
//   or one from its configuration), whatever the pass. startServer refuses to boot one inside it
//   that would follow the pass.
// Either way, the mark cannot keep a server that follows the pass from the two-thread pass.
import t, { type Test } from 'tap';
import { testThreads, withoutServers, withPinnedThreads } from './server';

export function commandTest(name: string, fn: (t: Test) => Promise<void>): void {
  onePassTest(name, 'boots no server', withoutServers, fn);
}

export function pinnedThreadsTest(name: string, fn: (t: Test) => Promise<void>): void {
  onePassTest(name, 'its servers have their own thread count', withPinnedThreads, fn);
}

/**
 * What the tests of a file share (a server with a thread count of its own, its keys), made by the
 * first test that asks for it: in the two-thread pass, which skips those tests, nothing is made.
 */
export function onFirstUse<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
}

/** A test skipped in the two-thread pass (saying `why`), its body run inside `limit`. */
function onePassTest(name: string, why: string, limit: (body: () => Promise<void>) => Promise<void>, fn: (t: Test) => Promise<void>): void {
  const options = testThreads() === 1 ? {} : { skip: `${why}, so it does the same work in both passes: runs in the one-thread pass` };
  t.test(name, options, (tt) => limit(() => fn(tt)));
}
