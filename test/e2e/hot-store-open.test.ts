// Processes that open the hot store at the same moment: a server starting on a new data directory
// while three `perch keygen` run beside it. Each one opens the LMDB environment in turn
// (store/lmdb.ts, underOpenLock); before, now and then one of them failed (MDB_PROBLEM, or "No
// transaction to renew"), and a probe that met such a failure moved the healthy environment aside
// from under the others. Every round: the server serves, every key is made and works on it, and
// nothing is moved aside.
import t from 'tap';
import { readdirSync, rmSync } from 'node:fs';
import { runCli, startServer, tempDataDir } from '../helpers/server';

const ROUNDS = 3;

for (let round = 1; round <= ROUNDS; round++) {
  t.test(`round ${round}: a server starts while three keygens run on its new data directory`, async (t) => {
    const dir = tempDataDir('perch-open-');
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const handles = ['ann', 'ben', 'cat'];
    const [server, ...keygens] = await Promise.all([
      startServer({ dataDir: dir }),
      ...handles.map((h) => runCli(['keygen', '--user', h, '--json', '--data', dir])),
    ]);
    t.teardown(() => server.close());
    for (const [i, r] of keygens.entries()) {
      t.equal(r.code, 0, `keygen ${handles[i]} succeeded: ${r.stderr}`);
      const made = JSON.parse(r.stdout) as { handle: string; key: string };
      t.equal(made.handle, handles[i]);
      const me = await server.get('/api/me', { key: made.key });
      t.equal(me.status, 200, `the key of ${handles[i]} works on the server`);
    }
    t.notOk(server.logs.some((l) => l.includes('hot store')), 'the server found a healthy store');
    t.same(readdirSync(dir).filter((f) => f.startsWith('lmdb.damaged-')), [], 'nothing was moved aside');
  });
}
