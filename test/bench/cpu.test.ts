// The CPU figure of perch bench (bench/cpu.ts): parsing /proc/<pid>/stat, reading a live process,
// and the per-request arithmetic.
import t from 'tap';
import { cpuPerRequestUs, cpuSecondsOf, parseCpuSeconds, parseStat, withCpu } from '../../bench/cpu';

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
