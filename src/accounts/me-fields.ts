// Fields other capabilities add to the caller's own GET /api/me answer (notifications adds
// `unread_notifications`). Accounts knows none of them: a capability registers a field in each
// HTTP thread (ThreadContext.me), and the route asks every registered field when it answers.
import type { User } from './store';

/** The value of a field for the user asking. */
export type MeField = (userId: string) => unknown;

export class MeFields {
  private readonly fields = new Map<string, MeField>();

  add(name: string, field: MeField): void {
    if (this.fields.has(name)) throw new Error(`two /api/me fields are named ${name}`);
    this.fields.set(name, field);
  }

  /** The user's public fields followed by every registered field. */
  answer(user: User): Record<string, unknown> {
    const out: Record<string, unknown> = { ...user };
    for (const [name, field] of this.fields) out[name] = field(user.id);
    return out;
  }
}
