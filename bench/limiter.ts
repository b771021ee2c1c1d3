// limiter: shared-limiter checks per second (the three creation rules of POST /api/shorten:
// bucket, burst cap, daily quota) against a bare LMDB read-modify-write of one small value in one
// write transaction, interleaved rounds in this process, 1,024 identities cycling. Generous limits
// so that every check passes and writes, the expensive path. No server: it measures the limiter
// on a hot store of its own.
import { loadConfig } from '../src/config';
import { openHotStore } from '../src/store/lmdb';
import { SharedLimiter } from '../src/ratelimit/shared';
import { shortenRules } from '../src/ratelimit/policies';
import { fmtInt, round3, type BenchContext, type ScenarioResult } from './context';
import { median } from './median';

/** Calls `fn` for `seconds` (synchronously: nothing else runs meanwhile); returns calls per second. */
function measure(seconds: number, fn: (i: number) => void): number {
  const end = performance.now() + seconds * 1000;
  let n = 0;
  while (performance.now() < end) {
    for (let i = 0; i < 256; i++) fn(n++);
  }
  return n / seconds;
}

export async function runLimiter(ctx: BenchContext): Promise<ScenarioResult> {
  if (ctx.remote) ctx.notes.push('measured in this process on a store of its own: --url is not used');
  const seconds = ctx.seconds(1);
  const rounds = ctx.rounds(5);
  const hot = openHotStore(ctx.tempDir('perch-bench-limiter-'));
  try {
    const limiter = new SharedLimiter(hot);
    const config = loadConfig({ overrides: { limits: { shorten: { capacity: 1e9, refill_per_second: 1e9, burst_per_second: 1e9, daily_quota: 1e12 } } } as never });
    const rules = shortenRules(config);
    const bare = hot.db<{ n: number }, string>('bench_bare');
    const bareReadModifyWrite = (i: number) => {
      bare.transactionSync(() => {
        const v = bare.get('k' + (i & 1023));
        bare.putSync('k' + (i & 1023), { n: (v?.n ?? 0) + 1 });
      });
    };
    const check = (i: number) => {
      limiter.check('shorten:key' + (i & 1023), rules);
    };
    if (ctx.warmup(1) > 0) {
      measure(ctx.warmup(1), bareReadModifyWrite);
      measure(ctx.warmup(1), check);
    }
    const bareRates: number[] = [];
    const limiterRates: number[] = [];
    for (let r = 1; r <= rounds; r++) {
      bareRates.push(measure(seconds, bareReadModifyWrite));
      limiterRates.push(measure(seconds, check));
      ctx.progress.line(`  limiter round ${r}/${rounds}: bare LMDB ${fmtInt(bareRates[r - 1])}/s, limiter ${fmtInt(limiterRates[r - 1])}/s`);
      // Let the line out before the next synchronous round.
      await new Promise((res) => setImmediate(res));
    }
    const ratio = median(limiterRates) / median(bareRates);
    return {
      rows: [{ measure: 'shared limiter checks/s vs bare LMDB read-modify-write', rps: median(limiterRates), baseline_rps: median(bareRates), ratio, goal: { text: 'none set' } }],
      figures: {
        rounds,
        seconds_per_round: seconds,
        bare_lmdb_rmw_per_s: Math.round(median(bareRates)),
        limiter_checks_per_s: Math.round(median(limiterRates)),
        round_ratios: limiterRates.map((l, i) => round3(l / bareRates[i])),
        ratio: round3(ratio),
      },
    };
  } finally {
    await hot.close();
  }
}
