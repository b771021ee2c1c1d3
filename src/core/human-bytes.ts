// Sizes as a person reads them, for the CLI's output and for messages clients show as they are.

/** Bytes in the largest unit that keeps the number at least 1: `0 B`, `512 B`, `1.5 KiB`, `12.3 MiB`. */
export function humanBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let u = 0;
  let v = n;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${n} B` : `${v.toFixed(1)} ${units[u]}`;
}
