// Home timeline windows: a user's precomputed timeline is a sorted run of 64-bit post ids kept as
// one binary value (8 bytes of `floor`, then the ids ascending, 8 bytes each, big-endian). Every
// post meant for the timeline with an id above `floor` is in the run; below it (trimmed by the cap,
// or never precomputed) the durable store answers. Pure functions over Buffers and bigints.

const HEADER = 8;

export interface TimelineWindow {
  floor: bigint;
  ids: bigint[];
}

export function decodeTimeline(buf: Buffer): TimelineWindow {
  const floor = buf.readBigUInt64BE(0);
  const n = (buf.length - HEADER) >> 3;
  const ids = new Array<bigint>(n);
  for (let i = 0; i < n; i++) ids[i] = buf.readBigUInt64BE(HEADER + i * 8);
  return { floor, ids };
}

export function encodeTimeline(floor: bigint, ids: bigint[]): Buffer {
  const buf = Buffer.allocUnsafe(HEADER + ids.length * 8);
  buf.writeBigUInt64BE(floor, 0);
  for (let i = 0; i < ids.length; i++) buf.writeBigUInt64BE(ids[i], HEADER + i * 8);
  return buf;
}

/**
 * Adds post ids (any order, duplicates allowed) to a timeline value and caps it at `cap` ids,
 * trimming the oldest and raising `floor` to the newest trimmed id. A missing timeline starts with
 * `floor` just below the smallest added id: nothing older was precomputed for it. Adding an id that
 * is already present, or one at or below `floor`, changes nothing, so replays are harmless.
 */
export function addToTimeline(current: Buffer | undefined | null, add: bigint[], cap: number): Buffer {
  const sortedAdd = add.length === 1 ? add : [...add].sort(compareBigint);
  if (current && current.length >= HEADER && sortedAdd.length > 0) {
    // The common case of fan-out: every added id is newer than the window's newest (or its floor
    // when empty), so the run is extended by copying bytes, without decoding it.
    const newest = current.length > HEADER ? current.readBigUInt64BE(current.length - 8) : current.readBigUInt64BE(0);
    if (sortedAdd[0] > newest) return appendAscending(current, sortedAdd, cap);
  }
  let floor: bigint;
  let ids: bigint[];
  if (current && current.length >= HEADER) {
    ({ floor, ids } = decodeTimeline(current));
  } else {
    floor = sortedAdd.length > 0 && sortedAdd[0] > 0n ? sortedAdd[0] - 1n : 0n;
    ids = [];
  }
  const merged: bigint[] = [];
  let i = 0;
  let j = 0;
  while (i < ids.length || j < sortedAdd.length) {
    let next: bigint;
    if (j >= sortedAdd.length || (i < ids.length && ids[i] <= sortedAdd[j])) next = ids[i++];
    else next = sortedAdd[j++];
    if (next <= floor) continue;
    if (merged.length > 0 && merged[merged.length - 1] === next) continue;
    merged.push(next);
  }
  if (merged.length > cap) {
    const cut = merged.length - cap;
    floor = merged[cut - 1];
    return encodeTimeline(floor, merged.slice(cut));
  }
  return encodeTimeline(floor, merged);
}

/**
 * Appends ids (ascending, all newer than every id of `current`, duplicates allowed) to a window,
 * keeping at most `cap` ids: the oldest are dropped and `floor` rises to the newest dropped one.
 */
function appendAscending(current: Buffer, ascending: bigint[], cap: number): Buffer {
  let add = ascending;
  for (let k = 1; k < add.length; k++) {
    if (add[k] === add[k - 1]) {
      add = add.filter((v, x) => x === 0 || v !== add[x - 1]);
      break;
    }
  }
  return appendNewer(current, add.length, cap, (out, at, k) => out.writeBigUInt64BE(add[k], at));
}

/**
 * Appends `count` ids (ascending, distinct, all newer than every id of `current`) to a window,
 * keeping at most `cap` ids: the oldest are dropped and `floor` rises to the newest dropped one.
 * `write(out, at, k)` writes the k-th added id at byte `at`.
 */
function appendNewer(current: Buffer, count: number, cap: number, write: (out: Buffer, at: number, k: number) => void): Buffer {
  const n = (current.length - HEADER) >> 3;
  const drop = Math.max(0, n + count - cap);
  const out = Buffer.allocUnsafe(HEADER + (n + count - drop) * 8);
  let at = HEADER;
  let from = 0;
  if (drop === 0) {
    at = current.copy(out, 0);
  } else if (drop <= n) {
    // The `drop` oldest ids of the window go; the newest of them becomes the floor.
    current.copy(out, 0, HEADER + (drop - 1) * 8, HEADER + drop * 8);
    at += current.copy(out, HEADER, HEADER + drop * 8);
  } else {
    // The whole window and some of the added ids go; the newest of those becomes the floor.
    from = drop - n;
    write(out, 0, from - 1);
  }
  for (let k = from; k < count; k++, at += 8) write(out, at, k);
  return out;
}

/**
 * The post ids of one fan-out batch, ascending and distinct, each split once into the two 32-bit
 * halves of its stored form. A batch adds the same few hundred ids to hundreds of timelines;
 * with bigints every id was converted again for every timeline it went to (a third of the
 * fan-out's time), while a table index is a small integer that is cheap to sort and to write.
 */
export class IdTable {
  private readonly hi: Uint32Array;
  private readonly lo: Uint32Array;

  /** `ids` must be ascending and distinct. */
  constructor(readonly ids: readonly bigint[]) {
    this.hi = new Uint32Array(ids.length);
    this.lo = new Uint32Array(ids.length);
    for (let i = 0; i < ids.length; i++) {
      if (i > 0 && ids[i] <= ids[i - 1]) throw new Error('IdTable ids must be ascending and distinct');
      this.hi[i] = Number(ids[i] >> 32n);
      this.lo[i] = Number(ids[i] & 0xffffffffn);
    }
  }

  /**
   * The same value as `addToTimeline(current, indexes.map((i) => ids[i]), cap)`, for `indexes`
   * into this table (any order, duplicates allowed). When every id is newer than the window's
   * newest, the usual case of fan-out, the window is extended without a bigint.
   */
  addTo(current: Buffer | null | undefined, indexes: number[], cap: number): Buffer {
    const add = ascendingDistinct(indexes);
    if (current && current.length >= HEADER && add.length > 0) {
      // The window's newest id (or its floor when empty), as two halves.
      const newest = current.length - 8;
      const first = add[0];
      const hi = current.readUInt32BE(newest);
      if (this.hi[first] > hi || (this.hi[first] === hi && this.lo[first] > current.readUInt32BE(newest + 4))) {
        return appendNewer(current, add.length, cap, (out, at, k) => this.write(out, at, add[k]));
      }
    }
    return addToTimeline(current, add.map((i) => this.ids[i]), cap);
  }

  private write(out: Buffer, at: number, index: number): void {
    out.writeUInt32BE(this.hi[index], at);
    out.writeUInt32BE(this.lo[index], at + 4);
  }
}

/** `indexes` sorted ascending without repeats (in place when they are not already). */
function ascendingDistinct(indexes: number[]): number[] {
  let sorted = true;
  for (let k = 1; k < indexes.length; k++) {
    if (indexes[k] <= indexes[k - 1]) {
      sorted = false;
      break;
    }
  }
  if (sorted) return indexes;
  indexes.sort((a, b) => a - b);
  return indexes.filter((v, k) => k === 0 || v !== indexes[k - 1]);
}

/** The number of ids a stored window holds above its floor. */
export function windowLength(buf: Buffer): number {
  return (buf.length - HEADER) >> 3;
}

/** A stored window's floor: every id meant for it above this is present. */
export function windowFloor(buf: Buffer): bigint {
  return buf.readBigUInt64BE(0);
}

/**
 * Ids of a stored window strictly below `before`, newest first, at most `max`, read from the
 * bytes in place (a binary search, then only the ids returned are decoded).
 */
export function idsBelow(buf: Buffer, before: bigint, max: number): bigint[] {
  let lo = 0;
  let hi = (buf.length - HEADER) >> 3;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (buf.readBigUInt64BE(HEADER + mid * 8) < before) lo = mid + 1;
    else hi = mid;
  }
  const out: bigint[] = [];
  for (let k = lo - 1; k >= 0 && out.length < max; k--) out.push(buf.readBigUInt64BE(HEADER + k * 8));
  return out;
}

/** True when a stored value is a window (holds at least its floor). */
export function isWindow(buf: Buffer | null | undefined): buf is Buffer {
  return !!buf && buf.length >= HEADER;
}

/** Merges lists that are each sorted newest first into one, newest first, without duplicates. */
export function mergeNewestFirst(lists: bigint[][], max: number): bigint[] {
  const pos = lists.map(() => 0);
  const out: bigint[] = [];
  while (out.length < max) {
    let best = -1;
    for (let l = 0; l < lists.length; l++) {
      if (pos[l] < lists[l].length && (best === -1 || lists[l][pos[l]] > lists[best][pos[best]])) best = l;
    }
    if (best === -1) break;
    const v = lists[best][pos[best]++];
    if (out.length === 0 || out[out.length - 1] !== v) out.push(v);
  }
  return out;
}

function compareBigint(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
