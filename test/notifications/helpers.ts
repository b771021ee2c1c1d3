// Shared helpers of the notification tests.
import { hashApiKey, newApiKey } from '../../src/core/api-key';
import { IdGenerator } from '../../src/core/snowflake';
import { migrateAll } from '../../src/capabilities';
import { openSqlite } from '../../src/store/sqlite';
import type { Key, TestServer } from '../helpers/server';
import { allPages, eventually } from '../social/helpers';

/** A gauge or counter of /metrics (the sum over its series when `labels` is not given). */
export async function metric(server: TestServer, name: string, labels = ''): Promise<number> {
  const text = (await server.get('/metrics')).text;
  let sum = 0;
  let found = false;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (!(rest.startsWith(' ') || rest.startsWith('{'))) continue;
    if (labels && !rest.startsWith(`{${labels}}`)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    found = true;
  }
  if (!found) throw new Error(`no metric ${name}${labels ? `{${labels}}` : ''}`);
  return sum;
}

/** Waits until every action event so far has been turned into notifications (none left to generate). */
export async function generated(server: TestServer): Promise<void> {
  await eventually('notifications generated', 10_000, async () => ((await metric(server, 'perch_notification_generation_lag_events')) === 0 ? true : undefined));
}

/** Every notification of a user, newest activity first. */
export async function notificationsOf(server: TestServer, key: string): Promise<any[]> {
  await generated(server);
  return (await allPages(server, '/api/notifications?limit=100', key)).items;
}

/** Waits until the user's notifications satisfy `ok`, and returns them. */
export async function waitForNotifications(server: TestServer, key: string, what: string, ok: (items: any[]) => boolean): Promise<any[]> {
  return (
    await eventually(what, 10_000, async () => {
      const items = (await allPages(server, '/api/notifications?limit=100', key)).items;
      return ok(items) ? items : undefined;
    })
  ).value;
}

export async function like(server: TestServer, key: string, postId: string): Promise<void> {
  const r = await server.post(`/api/posts/${postId}/like`, { key });
  if (r.status !== 204) throw new Error(`like failed: ${r.status} ${r.text}`);
}

export async function follow(server: TestServer, key: string, userId: string): Promise<void> {
  const r = await server.post(`/api/users/${userId}/follow`, { key });
  if (r.status !== 200) throw new Error(`follow failed: ${r.status} ${r.text}`);
}

/**
 * `n` users with API keys written straight into a new data directory's SQLite before a server
 * starts there: many users without a CLI run each.
 */
export function seedUsers(dataDir: string, prefix: string, n: number): Key[] {
  const db = openSqlite(dataDir);
  try {
    migrateAll(db);
    const ids = new IdGenerator(1000);
    const now = new Date().toISOString();
    const insertUser = db.prepare('INSERT INTO users (id, handle, handle_lower, created_at) VALUES (?, ?, ?, ?)');
    const insertKey = db.prepare('INSERT INTO api_keys (id, user_id, key_hash, admin, created_at) VALUES (?, ?, ?, 0, ?)');
    const out: Key[] = [];
    db.transaction(() => {
      for (let i = 0; i < n; i++) {
        const id = ids.next();
        const handle = `${prefix}${i}`;
        const key = newApiKey();
        insertUser.run(id, handle, handle.toLowerCase(), now);
        insertKey.run(`key_${id}`, id, hashApiKey(key), now);
        out.push({ key, key_id: `key_${id}`, user_id: id, handle, admin: false });
      }
    })();
    return out;
  } finally {
    db.close();
  }
}
