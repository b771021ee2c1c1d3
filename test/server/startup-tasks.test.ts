// The work before the server listens runs on the main thread (server/startup-tasks.ts): the same
// task tables as the pool, one task at a time, on a connection of its own that `end` closes with
// whatever the tasks opened.
import t from 'tap';
import { loadConfig } from '../../src/config';
import { CodePool } from '../../src/links/code-pool';
import { LINK_TASKS } from '../../src/links/tasks';
import { openSearchDb, SearchIndexStore } from '../../src/search/store';
import { SEARCH_TASKS } from '../../src/search/tasks';
import { startupTasks } from '../../src/server/startup-tasks';
import { openHotStore } from '../../src/store/lmdb';
import type { TaskContext, TaskTable } from '../../src/workers/context';
import { tempStore, type Teardown } from '../helpers/store';

function setUp(t: Teardown) {
  const { dir } = tempStore(t, 'perch-startup-');
  const hot = openHotStore(dir);
  t.teardown(() => hot.close());
  const config = loadConfig({ env: {}, overrides: { links: { pool_target: 300, pool_low_water: 100 } } });
  return { dir, hot, config };
}

t.test('the capabilities\' tasks run here, on the stores of the data directory', async (t) => {
  const { dir, hot, config } = setUp(t);
  const startup = startupTasks(config, dir, hot);
  const filled = await startup.runTask(LINK_TASKS, 'links.refillPool', { below: 300 });
  t.same(filled, { added: 300, size: 300 });
  t.equal(new CodePool(hot).size(), 300, 'the codes are in the hot store');
  const again = await startup.runTask(LINK_TASKS, 'links.refillPool', { below: 300 });
  t.same(again, { added: 0, size: 300 }, 'a full pool is left alone');
  const rebuilt = await startup.runTask(SEARCH_TASKS, 'search.rebuildIndex');
  t.equal(rebuilt.posts, 0);
  startup.end();
  const index = new SearchIndexStore(openSearchDb(dir));
  t.type(index.meta('built_at'), 'string', 'the index is marked built');
  index.db.close();
});

t.test('one task at a time, in the order asked; end closes what they opened', async (t) => {
  const { dir, hot, config } = setUp(t);
  const startup = startupTasks(config, dir, hot);
  const order: string[] = [];
  let seen: TaskContext | undefined;
  const closed: string[] = [];
  const table: TaskTable = {
    'test.slow': async (ctx: TaskContext) => {
      seen = ctx;
      order.push('slow start');
      await new Promise((r) => setTimeout(r, 30));
      order.push('slow end');
      ctx.onEnd?.push(() => closed.push('slow'));
      return 'slow';
    },
    'test.fast': (ctx: TaskContext) => {
      order.push('fast');
      t.equal(ctx, seen, 'every task gets the same context');
      return ctx.sqlite.prepare('SELECT 41 + 1 AS n').get();
    },
    'test.fails': () => {
      throw new Error('no');
    },
  };
  const run = startup.runTask as unknown as (table: TaskTable, name: string) => Promise<unknown>;
  const results = await Promise.allSettled([run(table, 'test.slow'), run(table, 'test.fails'), run(table, 'test.fast'), run(table, 'test.none')]);
  t.same(order, ['slow start', 'slow end', 'fast'], 'a task that awaits is not overtaken');
  t.same(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)), ['slow', 'no', { n: 42 }, 'unknown task test.none'], 'a failure stays with its own task');
  startup.end();
  t.same(closed, ['slow'], 'what a task opened for the context is closed');
  t.equal(seen?.sqlite.open, false, 'the connection is closed');
});
