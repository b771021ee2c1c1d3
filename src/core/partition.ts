// Which partition of a consumer a post belongs to. Post ids are snowflakes whose low bits are a
// per-millisecond sequence, mostly 0 under light load, so the id is reduced modulo a prime first:
// that mixes the millisecond bits in and spreads posts evenly. Pure.

export const PARTITION_MIX = 1_000_003n;

export function partitionOf(id: bigint, partitions: number): number {
  return Number(id % PARTITION_MIX) % partitions;
}

/**
 * The same partition as `partitionOf`, as an SQL condition on an integer column (ids are positive,
 * so SQLite's % agrees with BigInt's), with the partition count and the partition as parameters:
 * positional (`?`, in that order) unless named.
 */
export function partitionSql(column: string, partitions = '?', partition = '?'): string {
  return `(${column} % ${PARTITION_MIX}) % ${partitions} = ${partition}`;
}
