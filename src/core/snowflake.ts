// 64-bit, roughly time-sortable ids minted without coordination:
// 41 bits of milliseconds since SNOWFLAKE_EPOCH_MS, 10 bits of node id, 12 bits of sequence.
// The generator never goes backwards: when the wall clock steps back it keeps minting from the
// last timestamp it used, and when a millisecond's 4096 sequence numbers run out it borrows the
// next millisecond, so ids from one node are strictly increasing whatever the clock does.

/** 2024-01-01T00:00:00.000Z. */
export const SNOWFLAKE_EPOCH_MS = 1704067200000;
export const NODE_BITS = 10;
export const SEQUENCE_BITS = 12;
export const MAX_NODE_ID = (1 << NODE_BITS) - 1;
export const MAX_SEQUENCE = (1 << SEQUENCE_BITS) - 1;
/** The largest 63-bit value, above every id minted: the position before a list's first page. */
export const TOP = (1n << 63n) - 1n;
const MAX_TIMESTAMP = 2 ** 41 - 1;

export function composeId(timestampMs: number, nodeId: number, sequence: number): bigint {
  const t = checkedParts(timestampMs, nodeId, sequence);
  return (BigInt(t) << 22n) | (BigInt(nodeId) << 12n) | BigInt(sequence);
}

/** The milliseconds since the epoch of an id's parts, once each part is checked. */
function checkedParts(timestampMs: number, nodeId: number, sequence: number): number {
  const t = timestampMs - SNOWFLAKE_EPOCH_MS;
  if (!Number.isInteger(t) || t < 0 || t > MAX_TIMESTAMP) throw new RangeError(`timestamp out of range: ${timestampMs}`);
  if (!Number.isInteger(nodeId) || nodeId < 0 || nodeId > MAX_NODE_ID) throw new RangeError(`node id out of range: ${nodeId}`);
  if (!Number.isInteger(sequence) || sequence < 0 || sequence > MAX_SEQUENCE) throw new RangeError(`sequence out of range: ${sequence}`);
  return t;
}

/**
 * composeId's id as decimal text, computed with numbers rather than bigints (each bigint step
 * allocates, and every new post mints one). The id is t * 2^22 + low (low: the node and sequence
 * bits), up to 63 bits, more than a double holds exactly; with t split at a million, every
 * partial sum below stays under 2^53.
 */
export function composeIdText(timestampMs: number, nodeId: number, sequence: number): string {
  const t = checkedParts(timestampMs, nodeId, sequence);
  const tHigh = Math.floor(t / 1e6);
  // id = tHigh * 2^22 * 10^6 + below; below < 10^6 * 2^22 + 2^22.
  const below = (t - tHigh * 1e6) * 4194304 + nodeId * 4096 + sequence;
  const carry = Math.floor(below / 1e6);
  const high = tHigh * 4194304 + carry;
  const millionths = below - carry * 1e6;
  return high === 0 ? String(millionths) : String(high) + String(millionths).padStart(6, '0');
}

export interface IdParts {
  timestampMs: number;
  nodeId: number;
  sequence: number;
}

export function decomposeId(id: bigint | string): IdParts {
  const v = typeof id === 'bigint' ? id : BigInt(id);
  return {
    timestampMs: Number(v >> 22n) + SNOWFLAKE_EPOCH_MS,
    nodeId: Number((v >> 12n) & BigInt(MAX_NODE_ID)),
    sequence: Number(v & BigInt(MAX_SEQUENCE)),
  };
}

/** True when `s` is a decimal string that can be a snowflake id (no sign, no leading zero). */
export function isIdString(s: string): boolean {
  return /^[1-9][0-9]{0,18}$/.test(s) && BigInt(s) < 2n ** 63n;
}

export class IdGenerator {
  private lastMs: number;
  private sequence = 0;

  /**
   * @param nodeId  leased node id, unique among live minters on this data dir
   * @param clock   source of wall-clock milliseconds
   * @param lastMs  last timestamp used by a previous holder of this node id (never mint below it)
   */
  constructor(
    readonly nodeId: number,
    private readonly clock: () => number = Date.now,
    lastMs = 0,
  ) {
    if (!Number.isInteger(nodeId) || nodeId < 0 || nodeId > MAX_NODE_ID) throw new RangeError(`node id out of range: ${nodeId}`);
    this.lastMs = lastMs;
    // The first id of a resumed node must be above every id minted before, so start past lastMs.
    this.sequence = MAX_SEQUENCE;
  }

  /** The last millisecond used; persisted with the node lease so a successor never reuses it. */
  get lastTimestampMs(): number {
    return this.lastMs;
  }

  nextBigInt(): bigint {
    this.advance();
    return composeId(this.lastMs, this.nodeId, this.sequence);
  }

  next(): string {
    this.advance();
    return composeIdText(this.lastMs, this.nodeId, this.sequence);
  }

  /** Moves to the next id's millisecond and sequence number. */
  private advance(): void {
    const now = this.clock();
    if (now > this.lastMs) {
      this.lastMs = now;
      this.sequence = 0;
    } else if (this.sequence < MAX_SEQUENCE) {
      this.sequence++;
    } else {
      this.lastMs++;
      this.sequence = 0;
    }
  }
}
