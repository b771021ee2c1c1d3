// Data the benchmarks write straight into SQLite before a server starts: users with API keys,
// follow edges, and short links. Every benchmark seeds through here, so they measure the same
// shapes of data.
import type { Sqlite } from '../src/store/sqlite';
import { IdGenerator } from '../src/core/snowflake';
import { hashApiKey, newApiKey } from '../src/core/api-key';
import { generateCodes } from '../src/core/short-code';
import { LinkStore } from '../src/links/store';

// A node id of its own, so seeded ids never collide with the ids a server mints.
const ids = new IdGenerator(1000);

export interface Seeded {
  userId: string;
  /** The user's API key, or '' when seeded without one. */
  key: string;
}

/** `n` users named `<prefix><i>`, each with an API key when `withKeys`. */
export function seedUsers(db: Sqlite, prefix: string, n: number, withKeys: boolean): Seeded[] {
  const now = new Date().toISOString();
  const insertUser = db.prepare('INSERT INTO users (id, handle, handle_lower, created_at) VALUES (?, ?, ?, ?)');
  const insertKey = db.prepare('INSERT INTO api_keys (id, user_id, key_hash, admin, created_at) VALUES (?, ?, ?, 0, ?)');
  const out: Seeded[] = [];
  db.transaction(() => {
    for (let i = 0; i < n; i++) {
      const id = ids.next();
      const handle = `${prefix}${i}`;
      insertUser.run(id, handle, handle.toLowerCase(), now);
      const key = withKeys ? newApiKey() : '';
      if (withKeys) insertKey.run('key_' + id, id, hashApiKey(key), now);
      out.push({ userId: id, key });
    }
  })();
  return out;
}

/** Follow edges, with the users' counts kept as the server keeps them. */
export function seedFollows(db: Sqlite, edges: Array<[follower: string, followee: string]>): void {
  const now = new Date().toISOString();
  const follow = db.prepare('INSERT OR IGNORE INTO follows (follower_id, followee_id, since_id, created_at) VALUES (?, ?, ?, ?)');
  const following = db.prepare('UPDATE users SET following_count = following_count + 1 WHERE id = ?');
  const followers = db.prepare('UPDATE users SET followers_count = followers_count + 1 WHERE id = ?');
  db.transaction(() => {
    for (const [a, b] of edges) {
      if (follow.run(a, b, BigInt(ids.next()), now).changes) {
        following.run(a);
        followers.run(b);
      }
    }
  })();
}

/**
 * `authors` authors with keys, each followed by `followersEach` of a shared set of fans: the
 * posts benchmarks' population, where every post is fanned out while the load runs.
 */
export function seedAuthorsWithFollowers(db: Sqlite, authors: number, followersEach: number): Seeded[] {
  const seeded = seedUsers(db, 'author', authors, true);
  const fans = seedUsers(db, 'fan', Math.max(followersEach, authors * 2), false);
  const edges: Array<[string, string]> = [];
  seeded.forEach((a, i) => {
    for (let k = 0; k < followersEach; k++) edges.push([fans[(i * followersEach + k) % fans.length].userId, a.userId]);
  });
  seedFollows(db, edges);
  return seeded;
}

/** `n` active links of a new user, all to example.com; returns their codes. */
export function seedLinks(db: Sqlite, n: number): string[] {
  const store = new LinkStore(db);
  const now = Date.now();
  const [owner] = seedUsers(db, 'linkowner', 1, false);
  const codes = store.issueCodes(generateCodes(n, 7));
  db.transaction(() => {
    codes.forEach((code, i) =>
      store.insert({ code, id: ids.next(), ownerId: owner.userId, url: `https://example.com/landing/${i}?utm_source=bench`, domain: 'example.com', createdMs: now, expiresMs: null }),
    );
  })();
  return codes;
}

/** One post by each of `authorIds`, written straight into SQLite; returns their ids in that order. */
export function seedPosts(db: Sqlite, authorIds: readonly string[]): string[] {
  const now = new Date().toISOString();
  const insert = db.prepare("INSERT INTO posts (id, author_id, text, media_ids, reply_to, created_at) VALUES (?, ?, ?, '[]', NULL, ?)");
  const out: string[] = [];
  db.transaction(() => {
    for (const authorId of authorIds) {
      const id = ids.nextBigInt();
      insert.run(id, authorId, 'A benchmark post to be liked.', now);
      out.push(id.toString());
    }
  })();
  return out;
}
