// The pool tasks of notifications (workers/task-tables.ts loads this file in a pool thread).
import { deliveryTask } from './delivery';

export const NOTIFICATION_TASKS = {
  /** Sends the notifications of a range of outbox events to sockets and push services. */
  'notifications.deliver': deliveryTask,
};
