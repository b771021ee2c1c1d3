// The CPU time a server process used while a load ran, over the requests it answered: every thread
// of the process counts (the HTTP thread, the writer, the pool, V8's and libuv's helpers), since on
// two cores each of them takes a core from the others. It says what the server spent, apart from
// how fast the load generator drove it (it still moves with group sizes and the cores' sharing).
import { readFileSync } from 'node:fs';

/**
 * The unit of utime and stime in /proc/<pid>/stat: USER_HZ, which Linux fixes at 100 for what it
 * shows user space (sysconf(_SC_CLK_TCK)), whatever the kernel's own tick.
 */
const TICKS_PER_SECOND = 100;

/**
 * The command name, state, parent pid and user plus system time (in seconds) of a process or
 * thread, from the text of /proc/<pid>/stat (or /proc/<pid>/task/<tid>/stat): fields 2, 3, 4, 14
 * and 15. A process's times cover the whole thread group, threads that have ended included. The
 * command name may hold spaces and parentheses, so the other fields are counted after its last ')'.
 */
export function parseStat(stat: string): { name: string; state: string; ppid: number; cpuSeconds: number } | undefined {
  const end = stat.lastIndexOf(')');
  if (end === -1) return undefined;
  const fields = stat.slice(end + 2).split(' ');
  // fields[0] is the state (field 3): utime is field 14, stime field 15.
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
  return { name: stat.slice(stat.indexOf('(') + 1, end), state: fields[0], ppid: Number(fields[1]), cpuSeconds: (utime + stime) / TICKS_PER_SECOND };
}

/** The user and system time of a process, in seconds, from the text of its /proc/<pid>/stat. */
export function parseCpuSeconds(stat: string): number | undefined {
  return parseStat(stat)?.cpuSeconds;
}

/** The CPU seconds process `pid` has used so far, or undefined when it is not readable (gone, not Linux). */
export function cpuSecondsOf(pid: number): number | undefined {
  try {
    return parseCpuSeconds(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Runs `work` and answers its result with the CPU seconds `pid` used meanwhile (undefined when
 * there is no pid or /proc cannot tell).
 */
export async function withCpu<T>(pid: number | undefined, work: () => Promise<T>): Promise<{ result: T; cpuSeconds?: number }> {
  const before = pid === undefined ? undefined : cpuSecondsOf(pid);
  const result = await work();
  const after = pid === undefined ? undefined : cpuSecondsOf(pid);
  return before === undefined || after === undefined ? { result } : { result, cpuSeconds: after - before };
}

/** The CPU seconds of two measured runs together, when both were measured. */
export function sumCpu(a: { cpuSeconds?: number }, b: { cpuSeconds?: number }): number | undefined {
  return a.cpuSeconds === undefined || b.cpuSeconds === undefined ? undefined : a.cpuSeconds + b.cpuSeconds;
}

/** Microseconds of CPU per request, to one decimal; undefined without a CPU figure or requests. */
export function cpuPerRequestUs(cpuSeconds: number | undefined, requests: number): number | undefined {
  if (cpuSeconds === undefined || requests <= 0) return undefined;
  return Math.round((cpuSeconds * 1e7) / requests) / 10;
}

/** What the whole machine did with its CPUs, in seconds summed over them: the first line of /proc/stat. */
export interface MachineTimes {
  /** Running anything: user, nice, system, interrupts and softirqs. */
  busy: number;
  /** Idle, or waiting for I/O with nothing else to run. */
  idle: number;
  /**
   * Taken by the hypervisor for other guests while this machine had work to run (steal). On a
   * shared virtual machine it is how much of the run the machine was not there for the scenario.
   */
  steal: number;
}

/** The machine's times from the text of /proc/stat (its "cpu" line), or undefined. */
export function parseMachineTimes(procStat: string): MachineTimes | undefined {
  const line = procStat.split('\n', 1)[0];
  if (!line.startsWith('cpu ')) return undefined;
  // user nice system idle iowait irq softirq steal ...
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  if (f.length < 8 || f.slice(0, 8).some((x) => !Number.isFinite(x))) return undefined;
  const [user, nice, system, idle, iowait, irq, softirq, steal] = f;
  return { busy: (user + nice + system + irq + softirq) / TICKS_PER_SECOND, idle: (idle + iowait) / TICKS_PER_SECOND, steal: steal / TICKS_PER_SECOND };
}

/** The machine's times now, or undefined when /proc/stat cannot tell (not Linux). */
export function machineTimes(): MachineTimes | undefined {
  try {
    return parseMachineTimes(readFileSync('/proc/stat', 'utf8'));
  } catch {
    return undefined;
  }
}

/** Cores' worth of the machine's time busy, idle and stolen, on average over a span (as in --json). */
export interface MachineShares {
  busy_cores: number;
  idle_cores: number;
  steal_cores: number;
}

/**
 * The machine's shares between two readings `seconds` apart, to two decimals (steal 0.25: a
 * quarter of one core's time went to other guests); undefined without both readings.
 */
export function machineShares(before: MachineTimes | undefined, after: MachineTimes | undefined, seconds: number): MachineShares | undefined {
  if (!before || !after || !(seconds > 0)) return undefined;
  const share = (a: number, b: number) => Math.round(((b - a) / seconds) * 100) / 100;
  return { busy_cores: share(before.busy, after.busy), idle_cores: share(before.idle, after.idle), steal_cores: share(before.steal, after.steal) };
}
