// Waiting in tests for what the server does in the background: poll until it shows.

/** Polls `check` every 25 ms until it returns a value other than undefined, or fails after `ms`. */
export async function eventually<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<{ value: T; elapsedMs: number }> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value !== undefined) return { value, elapsedMs: Date.now() - started };
    if (Date.now() - started > ms) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
