// Where the process's memory goes, for /metrics: the resident set of the whole process (the
// kernel keeps it per process, not per thread), the V8 heap of each thread (thread-memory.ts), and
// the LMDB environment's map and the pages it uses (docs/memory.md).
import { Gauge, type Registry } from 'prom-client';
import { lmdbFootprint, type LmdbFootprint } from '../store/lmdb-footprint';
import { residentOf, type ThreadMemoryTable } from './thread-memory';

export function readOwnResident() {
  // Not Linux: Node knows the total only.
  return residentOf() ?? { total: process.memoryUsage.rss(), anonymous: NaN, file: NaN, peak: NaN };
}

export interface MemoryMetricsOptions {
  table: ThreadMemoryTable;
  /** Thread ids of the threads alive now (the supervisor's 0 included). */
  aliveThreads(): Set<number>;
  hot: import('../store/lmdb').HotStore;
  dataDir: string;
}

export function memoryMetrics(registry: Registry, opts: MemoryMetricsOptions): void {
  const heaps = (name: string, help: string, field: 'heapUsedBytes' | 'heapTotalBytes' | 'externalBytes') =>
    new Gauge({
      name,
      help,
      labelNames: ['kind', 'thread'] as const,
      registers: [registry],
      collect() {
        this.reset();
        opts.table.report();
        opts.table.forgetExcept(opts.aliveThreads());
        for (const h of opts.table.read()) this.set({ kind: h.kind, thread: String(h.threadId) }, h[field]);
      },
    });
  heaps('perch_thread_heap_used_bytes', 'V8 heap in use, per thread (kind: main, supervisor, http, writer, pool; thread: its thread id). A thread that runs the writer counts both; main is the main thread when it also serves HTTP.', 'heapUsedBytes');
  heaps('perch_thread_heap_total_bytes', 'V8 heap reserved, per thread.', 'heapTotalBytes');
  heaps('perch_thread_external_bytes', 'Memory outside the V8 heap held by its objects (Buffers, ArrayBuffers), per thread.', 'externalBytes');

  const resident = (name: string, help: string, field: 'total' | 'anonymous' | 'file' | 'peak') =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const v = readOwnResident()[field];
        if (Number.isFinite(v)) this.set(v);
      },
    });
  resident('perch_process_resident_bytes', 'Resident set of the whole process, all threads (the kernel does not split it by thread).', 'total');
  resident('perch_process_resident_anonymous_bytes', 'Anonymous part of the resident set: heaps, stacks, malloc arenas.', 'anonymous');
  resident('perch_process_resident_file_bytes', 'File-backed part of the resident set: the binaries and the LMDB map pages touched.', 'file');
  resident('perch_process_resident_peak_bytes', 'Peak resident set of the process since it started (VmHWM).', 'peak');

  const lmdb = (name: string, help: string, field: keyof LmdbFootprint) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(lmdbFootprint(opts.hot, opts.dataDir)[field]);
      },
    });
  lmdb('perch_lmdb_map_size_bytes', 'Size of the LMDB memory map (address space; only touched pages are resident).', 'mapSizeBytes');
  lmdb('perch_lmdb_used_pages', 'LMDB pages up to the last one written (free pages inside included).', 'usedPages');
  lmdb('perch_lmdb_page_size_bytes', 'LMDB page size.', 'pageSizeBytes');
  lmdb('perch_lmdb_file_bytes', 'Size of the LMDB data file on disk.', 'fileBytes');
  lmdb('perch_lmdb_readers', 'LMDB reader slots in use (threads and processes holding a read transaction).', 'readers');
}
