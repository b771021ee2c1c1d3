// Which partition of a consumer a post belongs to. Post ids are snowflakes whose low bits are a
// per-millisecond sequence, mostly 0 under light load, so the id is reduced modulo a prime first:
// that mixes the millisecond bits in and spreads posts evenly. Pure.

const MIX = 1_000_003n;

export function partitionOf(id: bigint, partitions: number): number {
  return Number(id % MIX) % partitions;
}
