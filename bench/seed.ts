// Data the benchmarks write straight into SQLite before a server starts: users with API keys,
// follow edges, and short links. Every benchmark seeds through here, so they measure the same
// shapes of data.
import type { Sqlite } from '../src/store/sqlite';
import { IdGenerator } from '../src/core/snowflake';
import { hashApiKey, newApiKey } from '../src/core/api-key';
import { generateCodes } from '../src/core/short-code';
import { LinkStore } from '../src/links/store';
import { seededInts } from '../test/fixtures/random';

// The seeded generator the tests use, so a benchmark's corpus and a test's come from one generator.
export { seededInts };

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
export function seedLinks(db: Sqlite, n: number, createdMs = Date.now()): string[] {
  const store = new LinkStore(db);
  const [owner] = seedUsers(db, 'linkowner', 1, false);
  const codes = store.issueCodes(generateCodes(n, 7));
  db.transaction(() => {
    codes.forEach((code, i) =>
      store.insert({ code, id: ids.next(), ownerId: owner.userId, url: `https://example.com/landing/${i}?utm_source=bench`, domain: 'example.com', createdMs, expiresMs: null }),
    );
  })();
  return codes;
}

/** One post by each of `authorIds`, written straight into SQLite; returns their ids in that order. */
export function seedOnePostEach(db: Sqlite, authorIds: readonly string[]): string[] {
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

/**
 * Posts by `authorId` with these texts, written straight into SQLite (ids from the seeding node,
 * one millisecond apart, ending now). With `events`, each gets its post_created event in the
 * outbox, as the server's createPost writes it, so the server's consumers process them at start.
 */
export function seedPosts(db: Sqlite, authorId: string, texts: readonly string[], events: boolean): void {
  const insertPost = db.prepare('INSERT INTO posts (id, author_id, text, media_ids, reply_to, created_at) VALUES (?, ?, ?, ?, NULL, ?)');
  const insertEvent = db.prepare("INSERT INTO events (type, actor_id, recipient_id, post_id, payload, created_at) VALUES ('post_created', ?, NULL, ?, ?, ?)");
  const start = Date.now() - texts.length;
  db.transaction(() => {
    texts.forEach((text, i) => {
      const id = ids.next();
      const at = new Date(start + i).toISOString();
      insertPost.run(BigInt(id), authorId, text, '[]', at);
      if (events) insertEvent.run(authorId, id, '{"reply_to":null}', at);
    });
  })();
}

/** `n` distinct pronounceable words of two to four syllables, shortest first (common words are short). */
export function syntheticWords(n: number, seed = 1): string[] {
  const rand = seededInts(seed);
  const consonants = 'bcdfghjklmnprstvz';
  const vowels = 'aeiou';
  const out = new Set<string>();
  while (out.size < n) {
    let w = '';
    for (let s = 0, syllables = 2 + rand(3); s < syllables; s++) w += consonants[rand(consonants.length)] + vowels[rand(vowels.length)];
    out.add(w);
  }
  return [...out].sort((a, b) => a.length - b.length);
}

/** A sampler of word ranks with Zipf's law (the r-th most common word is r times rarer than the first). */
export function zipfSampler(n: number, seed = 2): () => number {
  const rand = seededInts(seed);
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let r = 0; r < n; r++) cdf[r] = sum += 1 / (r + 1);
  return () => {
    const x = (rand(1 << 30) / (1 << 30)) * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** Post texts of 8 to 20 words drawn by Zipf's law from a synthetic vocabulary. */
export function zipfTexts(n: number, words: string[], seed: number): string[] {
  const rank = zipfSampler(words.length, seed);
  const rand = seededInts(seed + 1);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const w: string[] = [];
    for (let k = 0, len = 8 + rand(13); k < len; k++) w.push(words[rank()]);
    out.push(w.join(' '));
  }
  return out;
}

/**
 * A mix of queries: a common word (one of the 50 most frequent, in a large share of the posts),
 * two words of the 500 most frequent, or a rarer word.
 */
export function queryMix(words: string[], n: number): string[] {
  const rand = seededInts(9);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const kind = rand(10);
    if (kind < 5) out.push(words[rand(50)]);
    else if (kind < 8) out.push(`${words[rand(500)]} ${words[rand(500)]}`);
    else out.push(words[500 + rand(words.length - 500)]);
  }
  return out;
}
