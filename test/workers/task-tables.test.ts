// A pool thread finds a task through TASK_TABLES (workers/task-tables.ts): the list must give every
// capability's own table, and every task name must start with its capability's name.
import t from 'tap';
import { CAPABILITIES } from '../../src/capabilities';
import { capabilityOfTask, TASK_TABLES } from '../../src/workers/task-tables';
import { PROMPT_TASKS } from '../../src/workers/prompt-tasks';

t.test('each capability with pool tasks is listed with its own table', async (t) => {
  const withTasks = CAPABILITIES.filter((c) => c.tasks && Object.keys(c.tasks).length > 0);
  t.ok(withTasks.length >= 4, 'links, social, notifications, search');
  for (const c of withTasks) {
    t.ok(Object.hasOwn(TASK_TABLES, c.name), `${c.name} is listed`);
    t.equal(TASK_TABLES[c.name](), c.tasks, `${c.name}: the same table`);
    for (const name of Object.keys(c.tasks!)) t.equal(capabilityOfTask(name), c.name, `${name} is named after ${c.name}`);
  }
  t.same(Object.keys(TASK_TABLES).sort(), withTasks.map((c) => c.name).sort(), 'nothing else is listed');
});

t.test('capabilityOfTask', async (t) => {
  t.equal(capabilityOfTask('links.drainClicks'), 'links');
  t.equal(capabilityOfTask('search.apply'), 'search');
  t.equal(capabilityOfTask('ping'), '');
  t.equal(capabilityOfTask('constructor'), '');
});

t.test('every prompt task is a task of its capability', async (t) => {
  t.same([...PROMPT_TASKS].sort(), ['links.refillPool', 'notifications.deliver', 'social.fanout']);
  for (const name of PROMPT_TASKS) t.ok(Object.hasOwn(TASK_TABLES[capabilityOfTask(name)](), name), `${name} is in its table`);
});
