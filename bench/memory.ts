// The memory of a perch process while a scenario measures it, from /proc/<pid>/status: the
// resident set (VmRSS), its anonymous part (RssAnon: heaps and stacks, not the file-backed pages
// of LMDB's map or of the binaries), and the kernel's own peak of the resident set (VmHWM).
// RssAnon has no kernel peak, so its peak is the largest of samples taken every 50 ms. For a server
// this tool started, the kernel's peak is reset when the measured phase starts (writing 5 to
// /proc/<pid>/clear_refs), so VmHWM is that phase's exact peak, sampling gaps included; for a
// server it did not start (--url), it leaves the process alone and reports the sampled peak.
import { readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { residentOf } from '../src/server/thread-memory';

export interface MemoryPeak {
  /** Peak resident set in MiB: VmHWM over the phase, or the sampled peak when it could not be reset. */
  peak_rss_mib: number;
  /** Peak anonymous resident memory in MiB (sampled). */
  peak_anon_mib: number;
  /** What peak_rss_mib is: the kernel's VmHWM since the phase started, or the largest sample. */
  peak_rss_source: 'VmHWM' | 'sampled';
  samples: number;
}

const SAMPLE_MS = 50;
const MIB = 1024 * 1024;


/** Samples one process's memory from start() to stop(). */
export class MemoryWatcher {
  private peakRss = 0;
  private peakAnon = 0;
  private samples = 0;
  private timer: NodeJS.Timeout | undefined;
  private hwmReset = false;

  /** `mayReset`: this tool started the process, so it may reset the kernel's peak. */
  constructor(
    readonly pid: number,
    private readonly mayReset: boolean,
  ) {}

  start(): this {
    if (this.mayReset) {
      try {
        writeFileSync(`/proc/${this.pid}/clear_refs`, '5');
        this.hwmReset = true;
      } catch {
        this.hwmReset = false;
      }
    }
    this.sample();
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
    this.timer.unref();
    return this;
  }

  private sample(): void {
    const s = residentOf(this.pid);
    if (!s) return;
    this.samples++;
    this.peakRss = Math.max(this.peakRss, s.total);
    this.peakAnon = Math.max(this.peakAnon, s.anonymous);
  }

  stop(): MemoryPeak {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.sample();
    const hwm = this.hwmReset ? (residentOf(this.pid)?.peak ?? 0) : 0;
    return {
      peak_rss_mib: round1(Math.max(this.peakRss, hwm) / MIB),
      peak_anon_mib: round1(this.peakAnon / MIB),
      peak_rss_source: this.hwmReset ? 'VmHWM' : 'sampled',
      samples: this.samples,
    };
  }
}

/** The larger of two phases' peaks (a scenario that measures several servers reports the largest). */
export function largerPeak(a: MemoryPeak | undefined, b: MemoryPeak | undefined): MemoryPeak | undefined {
  if (!a) return b;
  if (!b) return a;
  return {
    peak_rss_mib: Math.max(a.peak_rss_mib, b.peak_rss_mib),
    peak_anon_mib: Math.max(a.peak_anon_mib, b.peak_anon_mib),
    peak_rss_source: a.peak_rss_source === 'VmHWM' && b.peak_rss_source === 'VmHWM' ? 'VmHWM' : 'sampled',
    samples: a.samples + b.samples,
  };
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

/**
 * The process listening on a TCP port of this machine, found through /proc (the socket's inode in
 * /proc/net/tcp*, then the process holding it), or undefined when it is not visible to this user.
 */
export function pidListeningOn(port: number): number | undefined {
  const inodes = new Set<string>();
  const portHex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address is "ADDR:PORT" in hex; state 0A is LISTEN; column 9 is the inode.
      if (cols.length > 9 && cols[1].endsWith(':' + portHex) && cols[3] === '0A') inodes.add(cols[9]);
    }
  }
  if (inodes.size === 0) return undefined;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${entry}/fd/${fd}`));
        if (m && inodes.has(m[1])) return Number(entry);
      } catch {
        // The descriptor closed meanwhile.
      }
    }
  }
  return undefined;
}
