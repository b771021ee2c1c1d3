// The allocation tool (bench/allocation.ts): how a sampled profile is summed by site, and a short
// run against a real server.
import t from 'tap';
import { bytesBySite, measureAllocation } from '../../bench/allocation';

const frame = (functionName: string, url: string, lineNumber: number) => ({ functionName, url, lineNumber });

t.test('a profile is summed by function and line, wherever in the tree it allocated', async (t) => {
  const head = {
    callFrame: frame('(root)', '', -1),
    selfSize: 0,
    children: [
      { callFrame: frame('handle', 'file:///srv/dist/src/http/router.js', 290), selfSize: 1000, children: [{ callFrame: frame('', 'node:timers', 10), selfSize: 48 }] },
      { callFrame: frame('run', 'file:///srv/dist/src/http/router.js', 10), selfSize: 0, children: [{ callFrame: frame('handle', 'file:///srv/dist/src/http/router.js', 290), selfSize: 24 }] },
    ],
  };
  t.same(
    [...bytesBySite(head)].sort(),
    [
      ['(anonymous) node:timers:11', 48],
      ['handle router.js:291', 1024],
    ],
    'lines are 1-based; sites that allocated nothing are left out',
  );
});

t.test('a short run against a real server gives bytes per post and the sites behind them', async (t) => {
  const r = await measureAllocation(500, 1, 5);
  t.ok(r.posts > 100, `posts created while sampling (${r.posts})`);
  t.ok(r.bytes_per_post > 500 && r.bytes_per_post < 100_000, `a post allocates some kilobytes (${r.bytes_per_post})`);
  t.equal(r.sites.length, 5, 'the five sites asked for');
  t.ok(r.sites[0].bytes_per_post >= r.sites[4].bytes_per_post, 'largest first');
});
