// The one definition of "median" the benchmarks report: the middle element once sorted (for an
// even count, the upper of the two middle ones).

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
