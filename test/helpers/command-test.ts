// Tests of perch's commands alone, which boot no server. The whole suite runs the end-to-end tests
// twice, with one HTTP thread per test server and with two (scripts/run-tests.js); commands run by
// runCli get none of the suite's settings, so such a test does the same work in both passes. It
// runs in the one-thread pass only. startServer refuses to boot a server inside one, so that the
// mark cannot keep a server from the two-thread pass.
import t, { type Test } from 'tap';
import { testThreads, withoutServers } from './server';

export function commandTest(name: string, fn: (t: Test) => Promise<void>): void {
  const options = testThreads() === 1 ? {} : { skip: 'boots no server: runs in the one-thread pass' };
  t.test(name, options, (tt) => withoutServers(() => fn(tt)));
}
