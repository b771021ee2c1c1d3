// The V8 heap of every thread of the process, in shared memory. Node gives the resident set of the
// process only (one address space: the kernel does not split it by thread), but each isolate
// knows its own heap, and only from inside that thread (Node 20 has no Worker.getHeapStatistics).
// So each thread writes its own figures into a slot of one SharedArrayBuffer and the supervisor
// reads them all for /metrics, without a message round trip to threads that may be busy or, for
// pool threads parked in Atomics.wait between tasks, unable to answer.
import { readFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';
import { threadId } from 'node:worker_threads';

/** 'main': the supervisor with the server's only HTTP server (and its writer) on the main thread. */
export const THREAD_KINDS = ['supervisor', 'http', 'writer', 'pool', 'main'] as const;
export type ThreadKind = (typeof THREAD_KINDS)[number];

/** Slots in the table: more than the threads a server runs (HTTP threads are capped well below). */
export const MEMORY_SLOTS = 64;
// Per slot: int32 owner (threadId + 1, 0 when free), int32 kind, then float64 heap used, heap
// total (what V8 reserved for its heap), external (Buffers and ArrayBuffers held by the heap).
const SLOT_BYTES = 32;
const OWNER = 0;
const KIND = 1;
const USED = 1;
const TOTAL = 2;
const EXTERNAL = 3;

export interface ThreadHeap {
  kind: ThreadKind;
  threadId: number;
  heapUsedBytes: number;
  heapTotalBytes: number;
  externalBytes: number;
}

export class ThreadMemoryTable {
  private readonly ints: Int32Array;
  private readonly floats: Float64Array;
  private slot = -1;

  constructor(readonly buffer: SharedArrayBuffer) {
    this.ints = new Int32Array(buffer);
    this.floats = new Float64Array(buffer);
  }

  static allocate(): ThreadMemoryTable {
    return new ThreadMemoryTable(new SharedArrayBuffer(MEMORY_SLOTS * SLOT_BYTES));
  }

  /**
   * Takes a free slot for the calling thread, with its kind; false when every slot is taken (the
   * thread then goes unreported rather than overwriting another's figures).
   */
  claim(kind: ThreadKind): boolean {
    if (this.slot !== -1) return true;
    for (let s = 0; s < MEMORY_SLOTS; s++) {
      const at = (s * SLOT_BYTES) / 4;
      if (Atomics.compareExchange(this.ints, at + OWNER, 0, threadId + 1) === 0) {
        Atomics.store(this.ints, at + KIND, THREAD_KINDS.indexOf(kind));
        this.slot = s;
        this.report();
        return true;
      }
    }
    return false;
  }

  /** Writes the calling thread's heap figures into its slot. */
  report(): void {
    if (this.slot === -1) return;
    const h = getHeapStatistics();
    const at = (this.slot * SLOT_BYTES) / 8;
    this.floats[at + USED] = h.used_heap_size;
    this.floats[at + TOTAL] = h.total_heap_size;
    this.floats[at + EXTERNAL] = h.external_memory;
  }

  /** Gives the calling thread's slot back (when it ends on its own). */
  release(): void {
    if (this.slot === -1) return;
    Atomics.store(this.ints, (this.slot * SLOT_BYTES) / 4 + OWNER, 0);
    this.slot = -1;
  }

  /**
   * Frees the slots of threads that are not alive any more (a thread ended by terminate() runs
   * none of its own code, so it cannot release its slot). `alive` holds thread ids.
   */
  forgetExcept(alive: ReadonlySet<number>): void {
    for (let s = 0; s < MEMORY_SLOTS; s++) {
      const at = (s * SLOT_BYTES) / 4;
      const owner = Atomics.load(this.ints, at + OWNER);
      if (owner !== 0 && !alive.has(owner - 1)) Atomics.compareExchange(this.ints, at + OWNER, owner, 0);
    }
  }

  /** Every claimed slot's figures. */
  read(): ThreadHeap[] {
    const out: ThreadHeap[] = [];
    for (let s = 0; s < MEMORY_SLOTS; s++) {
      const owner = Atomics.load(this.ints, (s * SLOT_BYTES) / 4 + OWNER);
      if (owner === 0) continue;
      const at = (s * SLOT_BYTES) / 8;
      out.push({
        kind: THREAD_KINDS[Atomics.load(this.ints, (s * SLOT_BYTES) / 4 + KIND)] ?? 'supervisor',
        threadId: owner - 1,
        heapUsedBytes: this.floats[at + USED],
        heapTotalBytes: this.floats[at + TOTAL],
        externalBytes: this.floats[at + EXTERNAL],
      });
    }
    return out.sort((a, b) => a.threadId - b.threadId);
  }
}

/** The resident set of the process and its parts, from /proc/self/status (Linux), in bytes. */
export interface Resident {
  total: number;
  anonymous: number;
  file: number;
  peak: number;
}

/**
 * Parses the fields of /proc/<pid>/status that describe the resident set. Missing fields (another
 * kernel) are NaN, so that a caller shows nothing rather than a wrong zero.
 */
export function parseResident(status: string): Resident {
  const field = (name: string) => {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status);
    return m ? Number(m[1]) * 1024 : NaN;
  };
  return { total: field('VmRSS'), anonymous: field('RssAnon'), file: field('RssFile'), peak: field('VmHWM') };
}

/** The resident set of process `pid` (or this process), or undefined once it is gone. */
export function residentOf(pid: number | 'self' = 'self'): Resident | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  return parseResident(status);
}

/**
 * The V8 heap in use per thread kind, summed, with the number of threads of each, from the text
 * of GET /metrics (how `perch status`, another process, learns what only the server knows).
 */
export function heapsByKind(metricsText: string): Partial<Record<ThreadKind, { threads: number; heapUsedBytes: number }>> {
  const out: Partial<Record<ThreadKind, { threads: number; heapUsedBytes: number }>> = {};
  const line = /^perch_thread_heap_used_bytes\{([^}]*)\} (\S+)$/gm;
  for (let m = line.exec(metricsText); m; m = line.exec(metricsText)) {
    const kind = /(?:^|,)kind="([^"]*)"/.exec(m[1])?.[1] as ThreadKind | undefined;
    const value = Number(m[2]);
    if (!kind || !THREAD_KINDS.includes(kind) || !Number.isFinite(value)) continue;
    const k = (out[kind] ??= { threads: 0, heapUsedBytes: 0 });
    k.threads++;
    k.heapUsedBytes += value;
  }
  return out;
}
