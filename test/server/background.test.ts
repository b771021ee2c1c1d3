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
