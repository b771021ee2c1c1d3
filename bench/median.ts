// The one definition of "median" the benchmarks report: the middle element once sorted (for an
// even count, the upper of the two middle ones); and of a percentile of latencies.

/** The element of `items` whose `key` is the median. */
export function medianBy<T>(items: T[], key: (item: T) => number): T {
  return [...items].sort((a, b) => key(a) - key(b))[Math.floor(items.length / 2)];
}

export function median(xs: number[]): number {
  return medianBy(xs, (x) => x);
}

/** `{ [name]: median }` of the values measured, or nothing when none was (no process to read). */
export function medianDefined(name: string, values: Array<number | undefined>): Record<string, number> {
  const measured = values.filter((v): v is number => v !== undefined);
  return measured.length > 0 ? { [name]: median(measured) } : {};
}

/**
 * The value at fraction `p` (0.99: the 99th percentile) of ascending `sorted`, by nearest rank:
 * the smallest value that at least that fraction of them do not exceed. NaN when there are none.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
}
