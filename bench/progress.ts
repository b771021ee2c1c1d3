// What `perch bench` shows while it runs, on stderr (stdout carries the table): a line for each
// step, and while a load runs, a live bar with its elapsed time and the last second's rate. The bar
// is drawn on a terminal only; elsewhere (a CI log, a pipe) each run still ends with its line, so
// the log says what ran and what it measured. cli-progress draws the bar: it redraws at a bounded
// rate and restores the cursor if the run is interrupted.

interface Bar {
  start(total: number, start: number, payload: Record<string, string>): void;
  update(value: number, payload?: Record<string, string>): void;
  stop(): void;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const cliProgress = require('cli-progress') as { SingleBar: new (options: Record<string, unknown>) => Bar };

/** How often the bar's elapsed time moves. */
const REDRAW_MS = 200;

export class Progress {
  private readonly live: boolean;

  constructor(private readonly out: NodeJS.WriteStream = process.stderr) {
    this.live = out.isTTY === true;
  }

  line(text: string): void {
    this.out.write(text + '\n');
  }

  /** A step without a known length (seeding, draining): its line, then how long it took. */
  async step<T>(label: string, work: () => Promise<T> | T): Promise<T> {
    const started = performance.now();
    const result = await work();
    this.line(`  ${label} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
    return result;
  }

  /**
   * A run of about `seconds`: `work` gets a function to report what it sees (e.g. "41,200 req/s");
   * the bar shows it beside the elapsed time; at the end, `summary` of the result is the run's line.
   */
  async timed<T>(label: string, seconds: number, work: (report: (detail: string) => void) => Promise<T>, summary: (result: T) => string): Promise<T> {
    let bar: Bar | undefined;
    let timer: NodeJS.Timeout | undefined;
    const started = performance.now();
    if (this.live) {
      bar = new cliProgress.SingleBar({
        stream: this.out,
        format: `  ${label} [{bar}] {elapsed}/${seconds} s {detail}`,
        barsize: 20,
        clearOnComplete: true,
        hideCursor: true,
        fps: 5,
      });
      bar.start(seconds * 1000, 0, { elapsed: '0', detail: '' });
      timer = setInterval(() => {
        const ms = performance.now() - started;
        bar!.update(Math.min(ms, seconds * 1000), { elapsed: (ms / 1000).toFixed(0) });
      }, REDRAW_MS);
    }
    try {
      const result = await work((detail) => bar?.update(Math.min(performance.now() - started, seconds * 1000), { detail }));
      if (timer) clearInterval(timer);
      bar?.stop();
      this.line(`  ${label}: ${summary(result)}`);
      return result;
    } catch (err) {
      if (timer) clearInterval(timer);
      bar?.stop();
      throw err;
    }
  }
}
