// Which pool each task runs in (server/background.ts). A module of its own, with no imports: the
// supervisor reads it, and the task tables (task-tables.ts) lead to modules that lead back to it.

/**
 * The tasks someone waits for within a fraction of a second, which run in the prompt pool at the
 * process's priority: a post's fan-out (followers' timelines), a notification's delivery
 * (open sockets), and the refill of the short-code pool (shortens take codes from it). Every other
 * task runs in the background pool, at a lower priority (server/background.ts).
 */
export const PROMPT_TASKS: ReadonlySet<string> = new Set(['social.fanout', 'notifications.deliver', 'links.refillPool']);
