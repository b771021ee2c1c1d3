// The check of an LMDB environment's file (fileProblem) reads it with plain reads, holding no
// reader slot: another process (here, a thread) that writes the environment meanwhile reuses
// pages of the snapshot being read. A healthy environment in use must never be taken for a damaged
// one: a command's open beside a busy server would move the server's live store aside.
import t from 'tap';
import { Worker } from 'node:worker_threads';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { tempDataDir } from '../helpers/server';
import { fileProblem } from '../../src/store/lmdb';
import { openRoot } from '../../src/store/lmdb-env';

/** Writes the environment at `path` in a loop until told to stop, counting its commits. */
const WRITER = `
const { workerData, parentPort } = require('node:worker_threads');
const { openRoot } = require(workerData.lmdb);
const root = openRoot(workerData.path);
const db = root.openDB({ name: 'churn', compression: false, encoding: 'binary' });
const state = new Int32Array(workerData.state);
const value = Buffer.alloc(2000, 7);
parentPort.postMessage('ready');
for (let i = 0; Atomics.load(state, 0) === 0; i++) {
  root.transactionSync(() => { for (let k = 0; k < 20; k++) db.putSync((i * 7 + k) % 3000, value); });
  Atomics.add(state, 1, 1);
}
root.close().then(() => parentPort.postMessage('closed'));
`;

t.test('a healthy environment that another writer changes while it is read is not found damaged', async (t) => {
  const dir = tempDataDir('perch-live-check-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'lmdb');
  const root = openRoot(path);
  root.openDB({ name: 'churn', compression: false, encoding: 'binary' }).putSync(0, Buffer.alloc(10));
  await root.close();

  const state = new Int32Array(new SharedArrayBuffer(8));
  const worker = new Worker(WRITER, { eval: true, workerData: { path, lmdb: require.resolve('../../src/store/lmdb-env'), state: state.buffer } });
  const messages: string[] = [];
  const heard = (what: string) =>
    new Promise<void>((resolve, reject) => {
      if (messages.includes(what)) return resolve();
      worker.on('message', (m: string) => m === what && resolve());
      worker.once('error', reject);
    });
  worker.on('message', (m: string) => messages.push(m));
  await heard('ready');

  const problems: string[] = [];
  let looks = 0;
  const commitsBefore = Atomics.load(state, 1);
  const until = performance.now() + 1500;
  while (performance.now() < until) {
    const problem = fileProblem(path, true);
    looks++;
    if (problem) problems.push(problem);
  }
  const commits = Atomics.load(state, 1) - commitsBefore;
  Atomics.store(state, 0, 1);
  await heard('closed');
  await worker.terminate();

  t.ok(commits > 50, `the writer committed while the file was looked at (${commits} commits during ${looks} looks)`);
  t.same(problems, [], 'no look took it for damaged');
  t.equal(fileProblem(path, true), null, 'and at rest it is whole');
});
