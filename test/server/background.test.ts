// The supervisor's background jobs: a job with a wake counter runs as soon as the counter moves,
// long before its tick, and stopping leaves no waiter behind.
import t from 'tap';
import { startBackground, tickRuns, type BackgroundContext, type BackgroundJob } from '../../src/server/background';

const ctx = {} as BackgroundContext;

/** `p`, or a failure if it takes longer than `ms` (a bound against hanging, not a speed check). */
async function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

t.test('a job runs when its wake counter moves, without waiting for its tick', async (t) => {
  const counter = new Int32Array(new SharedArrayBuffer(4));
  const runs: boolean[] = [];
  let ran: () => void = () => {};
  const job: BackgroundJob = {
    name: 'test.wake',
    everyMs: 3_600_000, // the tick would come in an hour
    flushOnStop: true,
    wakeOn: counter,
    run: (_ctx, final) => {
      runs.push(final);
      ran();
    },
  };
  const background = startBackground([job], ctx);
  await new Promise((r) => setTimeout(r, 50));
  t.same(runs, [], 'nothing to do until the counter moves');

  const first = new Promise<void>((r) => (ran = r));
  Atomics.add(counter, 0, 1);
  Atomics.notify(counter, 0);
  await within(5000, 'the woken run', first);
  t.same(runs, [false], 'one ordinary run');

  await within(5000, 'stop', background.stop());
  t.same(runs, [false, true], 'and the final run of the shutdown');
});

t.test("a woken job's tick is skipped within a period of its last run's start", async (t) => {
  const woken = { everyMs: 10, wakeOn: new Int32Array(new SharedArrayBuffer(4)) };
  t.equal(tickRuns(woken, 1000, undefined), true, 'never run: the tick runs it');
  t.equal(tickRuns(woken, 1000, 995), false, 'a run started 5 ms ago');
  t.equal(tickRuns(woken, 1000, 990), true, 'a period ago');
  t.equal(tickRuns(woken, 1000, 900), true);
  const ticking = { everyMs: 10 };
  t.equal(tickRuns(ticking, 1000, 999), true, 'a job without a wake counter runs at every tick');
});

t.test('a run that answers a number runs again that many milliseconds later, with no tick or wake', async (t) => {
  const answers = [30, undefined];
  const runs: number[] = [];
  let done: () => void = () => {};
  const second = new Promise<void>((r) => (done = r));
  const job: BackgroundJob = {
    name: 'test.retry',
    everyMs: 10,
    tickMs: 3_600_000,
    wakeOn: new Int32Array(new SharedArrayBuffer(4)),
    run: () => {
      runs.push(performance.now());
      if (runs.length === 2) done();
      return answers.shift();
    },
  };
  Atomics.add(job.wakeOn!, 0, 1);
  const background = startBackground([job], ctx);
  // The counter moved before the start: nothing has run yet, so the hour-long tick is all there is.
  await new Promise((r) => setTimeout(r, 50));
  t.same(runs, [], 'no run before a wake');
  Atomics.add(job.wakeOn!, 0, 1);
  Atomics.notify(job.wakeOn!, 0);
  await within(5000, 'the run asked for', second);
  t.ok(runs[1] - runs[0] >= 25, `the second run came after the time asked for (${(runs[1] - runs[0]).toFixed(1)} ms)`);
  await new Promise((r) => setTimeout(r, 80));
  t.equal(runs.length, 2, 'a run that answers nothing asks for no other');
  await within(5000, 'stop', background.stop());
});

t.test('a wake during a run that a retry started brings another run after it, a period from its start', async (t) => {
  const counter = new Int32Array(new SharedArrayBuffer(4));
  const starts: number[] = [];
  let release: () => void = () => {};
  const signals: Array<() => void> = [];
  const started = (n: number) => new Promise<void>((r) => (signals[n] = r));
  const secondStarted = started(1);
  const thirdStarted = started(2);
  const job: BackgroundJob = {
    name: 'test.rerun',
    everyMs: 50,
    tickMs: 3_600_000, // no tick within the test
    wakeOn: counter,
    run: () => {
      starts.push(performance.now());
      signals[starts.length - 1]?.();
      if (starts.length === 1) return 100; // asks for the run the next wake will meet
      if (starts.length === 2) return new Promise<void>((r) => (release = r));
    },
  };
  const background = startBackground([job], ctx);
  const wake = () => {
    Atomics.add(counter, 0, 1);
    Atomics.notify(counter, 0);
  };
  wake();
  await within(5000, 'the run the retry started', secondStarted);
  // The running one may have read before this change: it must be looked at again. The wake-up
  // loop only meets the running run, and after it waits for the next move, which never comes.
  wake();
  await new Promise((r) => setTimeout(r, 10));
  t.equal(starts.length, 2, 'not while the second runs');
  release();
  await within(5000, 'the run after it', thirdStarted);
  t.equal(starts.length, 3);
  t.ok(starts[2] - starts[1] >= 45, `a period from the second's start (${(starts[2] - starts[1]).toFixed(1)} ms)`);
  await within(5000, 'stop', background.stop());
});
