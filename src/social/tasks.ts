// The microblog's pool tasks (workers/task-tables.ts loads this file in a pool thread).
import { fanoutTask } from './fanout';

export const SOCIAL_TASKS = {
  /** Home-timeline fan-out of a range of outbox events. */
  'social.fanout': fanoutTask,
};
