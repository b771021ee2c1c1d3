// The supervisor's background jobs: a job with a wake counter runs as soon as the counter moves,
// long before its tick, and stopping leaves no waiter behind.
import t from 'tap';
import { startBackground, type BackgroundContext, type BackgroundJob } from '../../src/server/background';

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
