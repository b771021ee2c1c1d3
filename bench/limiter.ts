// Limiter micro-benchmark: shared-limiter checks per second (the three shorten rules: bucket,
// burst cap, daily quota) against a bare LMDB read-modify-write of one key, measured in the same
// run, interleaved, so the ratio holds on a noisy machine.
//   node dist/bench/limiter.js [seconds-per-round=1] [rounds=5]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config';
import { openHotStore } from '../src/store/lmdb';
import { SharedLimiter } from '../src/ratelimit/shared';
import { shortenRules } from '../src/ratelimit/policies';
import { median } from './median';

const secondsPerRound = Number(process.argv[2] ?? 1);
const rounds = Number(process.argv[3] ?? 5);

function measure(fn: (i: number) => void): number {
  const end = performance.now() + secondsPerRound * 1000;
  let n = 0;
  while (performance.now() < end) {
    for (let i = 0; i < 256; i++) fn(n++);
  }
  return n / secondsPerRound;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'perch-bench-limiter-'));
  const hot = openHotStore(dir);
  const limiter = new SharedLimiter(hot);
  // Generous limits so every check passes and writes (the expensive path).
  const config = loadConfig({ overrides: { limits: { shorten: { capacity: 1e9, refill_per_second: 1e9, burst_per_second: 1e9, daily_quota: 1e12 } } } as never });
  const rules = shortenRules(config);
  const bare = hot.db<{ n: number }, string>('bench_bare');

  const bareRmw = (i: number) => {
    bare.transactionSync(() => {
      const v = bare.get('k' + (i & 1023));
      bare.putSync('k' + (i & 1023), { n: (v?.n ?? 0) + 1 });
    });
  };
  const check = (i: number) => {
    limiter.check('shorten:key' + (i & 1023), rules);
  };

  measure(bareRmw);
  measure(check);
  const bareRates: number[] = [];
  const limiterRates: number[] = [];
  for (let r = 0; r < rounds; r++) {
    bareRates.push(measure(bareRmw));
    limiterRates.push(measure(check));
  }
  const result = {
    bench: 'limiter',
    rounds,
    seconds_per_round: secondsPerRound,
    bare_lmdb_rmw_per_s: Math.round(median(bareRates)),
    limiter_checks_per_s: Math.round(median(limiterRates)),
    ratio: Number((median(limiterRates) / median(bareRates)).toFixed(3)),
  };
  process.stdout.write(JSON.stringify(result) + '\n');
  await hot.close();
  rmSync(dir, { recursive: true, force: true });
}

void main();
