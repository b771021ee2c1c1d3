import t from 'tap';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { rmSync } from 'node:fs';
import { tempDataDir } from '../helpers/server';
import { openHotStore } from '../../src/store/lmdb';
import { SharedLimiter } from '../../src/ratelimit/shared';

const FIXTURE = join(__dirname, '..', 'fixtures', 'limiter-hammer.js');
const now = Date.UTC(2026, 10, 22, 12, 0, 0);

/** A limiter on a fresh data dir, removed when the test ends. */
function openLimiter(t: { teardown(fn: () => unknown): void }): SharedLimiter {
  const dataDir = tempDataDir();
  const hot = openHotStore(dataDir);
  t.teardown(async () => {
    await hot.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return new SharedLimiter(hot);
}

t.test('threads and processes on one data dir share one bucket: exactly capacity pass', async (t) => {
  const dataDir = tempDataDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const job = { dataDir, attempts: 200, startAt: Date.now() + 1500 };
  const inThreads = [0, 1, 2].map(
    () =>
      new Promise<number>((resolve, reject) => {
        const w = new Worker(FIXTURE, { workerData: job });
        w.once('message', (n: number) => resolve(n));
        w.once('error', reject);
      }),
  );
  const inProcesses = [0, 1].map(
    () =>
      new Promise<number>((resolve, reject) => {
        execFile(process.execPath, [FIXTURE, JSON.stringify(job)], (err, stdout) => (err ? reject(err) : resolve(Number(stdout))));
      }),
  );
  const counts = await Promise.all([...inThreads, ...inProcesses]);
  t.equal(counts.reduce((a, b) => a + b, 0), 10, `passes per contender: ${counts.join(', ')}`);
});

t.test('a rejected composite request consumes nothing; separate identities are independent', async (t) => {
  const limiter = openLimiter(t);
  const rules = [
    { kind: 'bucket' as const, name: 'big', capacity: 3, refillPerSecond: 1e-9 },
    { kind: 'bucket' as const, name: 'small', capacity: 1, refillPerSecond: 1 },
  ];
  t.equal(limiter.check('a', rules, now).allowed, true);
  const rejected = limiter.check('a', rules, now);
  t.equal(rejected.allowed, false);
  t.same(rejected.rejectedBy, ['small']);
  // Had the rejected request taken from "big", it would be empty one check earlier.
  t.equal(limiter.check('a', rules, now + 1000).allowed, true);
  t.equal(limiter.check('a', rules, now + 2000).allowed, true, 'big still had a token: the rejection took none');
  t.same(limiter.check('a', rules, now + 3000).rejectedBy, ['big']);
  t.equal(limiter.peek('a', rules, now + 3000).remaining, 0);
  t.equal(limiter.check('b', rules, now).allowed, true, 'another identity has its own buckets');
  limiter.reset('a', rules);
  t.equal(limiter.check('a', rules, now).allowed, true, 'reset forgets the state');
});

t.test('a refund gives the last check back, atomically, and never exceeds the capacity', async (t) => {
  const limiter = openLimiter(t);
  const rules = [
    { kind: 'bucket' as const, name: 'burst', capacity: 2, refillPerSecond: 1e-9 },
    { kind: 'daily' as const, name: 'day', limit: 3 },
  ];
  limiter.refund('a', rules, now);
  t.equal(limiter.peek('a', rules, now).remaining, 2, 'a refund before any use changes nothing');
  t.equal(limiter.check('a', rules, now).allowed, true);
  t.equal(limiter.check('a', rules, now).allowed, true);
  t.same(limiter.check('a', rules, now).rejectedBy, ['burst']);
  limiter.refund('a', rules, now);
  t.equal(limiter.peek('a', rules, now).remaining, 1);
  t.equal(limiter.check('a', rules, now).allowed, true, 'the refunded request can be made again');
  // The daily quota got its count back too: three checks passed today, one was refunded.
  limiter.refund('a', rules, now);
  limiter.refund('a', rules, now);
  limiter.refund('a', rules, now);
  t.equal(limiter.peek('a', rules, now).remaining, 2, 'capped at the capacity');
  t.equal(limiter.check('a', rules, now).allowed, true);
  t.equal(limiter.check('a', rules, now).allowed, true);
  t.same(limiter.check('a', rules, now).rejectedBy, ['burst']);
});

t.test('a record with a sliding window keeps its times, and a changed window limit keeps the record', async (t) => {
  const limiter = openLimiter(t);
  const rules = (limit: number) => [
    { kind: 'bucket' as const, name: 'b', capacity: 100, refillPerSecond: 1e-9 },
    { kind: 'window' as const, name: 'w', limit, windowMs: 1000 },
    { kind: 'daily' as const, name: 'd', limit: 1000 },
  ];
  for (let i = 0; i < 3; i++) t.equal(limiter.check('a', rules(3), now + i).allowed, true);
  t.same(limiter.check('a', rules(3), now + 3).rejectedBy, ['w'], 'the window is full');
  const peek = limiter.peek('a', rules(3), now + 3);
  t.equal(peek.remaining, 0);
  // The same names with a larger window limit: the record is read as it is (three times, 97
  // tokens, three today), not started afresh.
  t.equal(limiter.check('a', rules(4), now + 4).allowed, true);
  t.same(limiter.check('a', rules(4), now + 5).rejectedBy, ['w']);
  const passed = limiter.check('a', rules(4), now + 1001);
  t.equal(passed.allowed, true, 'the first two times have left the window');
  t.equal(passed.remaining, 1, 'three in it now: 2, 4 and 1001 ms');
  limiter.refund('a', rules(4), now + 1001);
  t.equal(limiter.peek('a', rules(4), now + 1001).remaining, 2, 'the refund forgot the newest time');
});

t.test('forgetAtRest forgets only the full records of its prefix and rule set', async (t) => {
  const limiter = openLimiter(t);
  const rules = [{ kind: 'bucket' as const, name: 'guess', capacity: 2, refillPerSecond: 1 }];
  const others = [{ kind: 'bucket' as const, name: 'other', capacity: 2, refillPerSecond: 1 }];
  limiter.check('p:a', rules, now);
  limiter.check('p:b', rules, now);
  limiter.check('p:b', rules, now);
  limiter.check('p:c', others, now);
  limiter.check('q:a', rules, now);
  t.equal(limiter.forgetAtRest('p:', rules, now + 999), 0, 'none full yet');
  t.equal(limiter.forgetAtRest('p:', rules, now + 1000), 1, 'p:a has its one token back');
  t.equal(limiter.peek('p:b', rules, now + 1000).remaining, 1, 'p:b is still one short');
  t.equal(limiter.forgetAtRest('p:', rules, now + 2000), 1, 'then p:b');
  t.equal(limiter.peek('p:c', others, now).remaining, 1, 'another rule set under the prefix is kept');
  t.equal(limiter.peek('q:a', rules, now).remaining, 1, 'another prefix is kept');
  t.equal(limiter.forgetAtRest('p:', rules, now + 60_000), 0, 'nothing left to forget');
  t.equal(limiter.check('p:a', rules, now + 2000).remaining, 1, 'a forgotten identity starts full');
});
