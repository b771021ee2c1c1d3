// Where each capability's pool tasks are, by the capability's name, which prefixes the name of
// every task of its table ('links.drainClicks'). A pool thread loads a table when it first runs one
// of its tasks, not every capability at its start: a thread starts when work arrives, and what it
// does not load neither delays that work nor stays in its heap (docs/memory.md).
// test/workers/task-tables.test.ts checks this list against the capabilities' own tables.
import type { TaskTable } from './context';

export const TASK_TABLES: Readonly<Record<string, () => TaskTable>> = {
  links: () => (require('../links/tasks') as typeof import('../links/tasks')).LINK_TASKS,
  social: () => (require('../social/tasks') as typeof import('../social/tasks')).SOCIAL_TASKS,
  notifications: () => (require('../notifications/tasks') as typeof import('../notifications/tasks')).NOTIFICATION_TASKS,
  search: () => (require('../search/tasks') as typeof import('../search/tasks')).SEARCH_TASKS,
  media: () => (require('../media/tasks') as typeof import('../media/tasks')).MEDIA_TASKS,
};

/** The capability a task belongs to: its name up to the first dot. */
export function capabilityOfTask(task: string): string {
  const dot = task.indexOf('.');
  return dot === -1 ? '' : task.slice(0, dot);
}
