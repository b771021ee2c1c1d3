// The CPU figure of perch bench (bench/cpu.ts): parsing /proc/<pid>/stat, reading a live process,
// and the per-request arithmetic.
import t from 'tap';
import { cpuPerRequestUs, cpuSecondsOf, machineShares, machineTimes, parseCpuSeconds, parseMachineTimes, parseStat, withCpu } from '../../bench/cpu';

// Field 2 is the command in parentheses; 14 and 15 are utime and stime, in ticks of 1/100 s.
const STAT = '4242 (node (perch) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 1234 56 0 0 20 0 11 0 500 1000000 5000 18446744073709551615';

/**
 * Spends `ms` of this process's CPU time (not of the clock: on a busy machine the clock runs on
 * while other processes have the core).
 */
function spinCpu(ms: number): void {
  const start = process.cpuUsage();
  for (;;) {
    const used = process.cpuUsage(start);
    if ((used.user + used.system) / 1000 >= ms) return;
  }
}

t.test('a stat line gives user plus system time in seconds, whatever the command name holds', async (t) => {
  t.equal(parseCpuSeconds(STAT), 12.9, '1,234 + 56 ticks');
  t.equal(parseCpuSeconds('1 (a) R 0 1 1 0 -1 0 0 0 0 0 0 0'), 0, 'a process that has used no CPU yet');
  t.same(parseStat(STAT), { name: 'node (perch) x', state: 'S', ppid: 1, cpuSeconds: 12.9 }, 'with the name, state and parent');
});

t.test('a line that is not a stat line gives nothing rather than a wrong figure', async (t) => {
  t.equal(parseCpuSeconds(''), undefined, 'empty');
  t.equal(parseCpuSeconds('no parenthesis here 1 2 3'), undefined, 'no command field');
  t.equal(parseCpuSeconds('1 (a) R 0 1'), undefined, 'cut short before utime');
});

t.test('a live process has a CPU time that grows with the work it does; a missing one has none', async (t) => {
  const before = cpuSecondsOf(process.pid);
  t.type(before, 'number', 'this process is readable');
  spinCpu(150);
  const after = cpuSecondsOf(process.pid)!;
  t.ok(after > before!, `150 ms of CPU spent shows: ${before} -> ${after} s`);
  t.equal(cpuSecondsOf(2 ** 30), undefined, 'no such process');
});

t.test('withCpu measures what the work used, and nothing without a process', async (t) => {
  const measured = await withCpu(process.pid, async () => {
    spinCpu(120);
    return 'done';
  });
  t.equal(measured.result, 'done', 'the work\'s result comes back');
  // The kernel counts in ticks of 10 ms, and the figure takes in the rest of this process too.
  t.ok(measured.cpuSeconds !== undefined && measured.cpuSeconds >= 0.1, `about 0.12 s of CPU: ${measured.cpuSeconds}`);
  const none = await withCpu(undefined, async () => 7);
  t.same(none, { result: 7 }, 'no pid, no CPU figure');
});

t.test('CPU per request in microseconds, to one decimal', async (t) => {
  t.equal(cpuPerRequestUs(1.5, 30_000), 50, '1.5 s over 30,000 requests');
  t.equal(cpuPerRequestUs(1, 3), 333333.3, 'rounded to one decimal');
  t.equal(cpuPerRequestUs(undefined, 100), undefined, 'no CPU figure');
  t.equal(cpuPerRequestUs(1, 0), undefined, 'no requests answered');
});

// /proc/stat's first line: user nice system idle iowait irq softirq steal guest guest_nice, in ticks.
const PROC_STAT = 'cpu  1000 20 300 5000 40 0 60 250 0 0\ncpu0 500 10 150 2500 20 0 30 125 0 0\nintr 1 2 3\n';

t.test("the machine's busy, idle and stolen time come from /proc/stat's first line", async (t) => {
  t.same(parseMachineTimes(PROC_STAT), { busy: 13.8, idle: 50.4, steal: 2.5 }, 'user+nice+system+irq+softirq, idle+iowait, steal; in seconds');
  t.equal(parseMachineTimes('cpu0 1 2 3 4 5 6 7 8\n'), undefined, 'a line for one CPU is not the whole machine');
  t.equal(parseMachineTimes('cpu  1 2 3 4\n'), undefined, 'a kernel without steal time');
  t.equal(parseMachineTimes('cpu  1 2 x 4 5 6 7 8\n'), undefined, 'a field that is not a number');
  t.equal(parseMachineTimes(''), undefined, 'nothing read');
});

t.test('shares of the machine between two readings are cores on average', async (t) => {
  const before = { busy: 10, idle: 20, steal: 1 };
  const after = { busy: 17, idle: 22, steal: 1.5 };
  t.same(machineShares(before, after, 4), { busy_cores: 1.75, idle_cores: 0.5, steal_cores: 0.13 }, '7 s busy, 2 s idle and 0.5 s stolen over 4 s');
  t.equal(machineShares(undefined, after, 4), undefined, 'no first reading');
  t.equal(machineShares(before, after, 0), undefined, 'no time between them');
  const now = machineTimes();
  t.ok(now && now.busy > 0 && now.idle >= 0 && now.steal >= 0, 'this machine is readable');
});
