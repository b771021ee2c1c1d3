// Stores for search tests below the HTTP server: the main database with users and posts made
// through the writer's operations (so their outbox events are the real ones), the hot store, and
// the engine's database, all in one temporary data directory.
import { openHotStore, type HotStore } from '../../src/store/lmdb';
import { addUsers, commitAll, groupCommit, tempStore, type Teardown } from '../helpers/store';
import type { Sqlite } from '../../src/store/sqlite';
import { EmbeddedEngine, type EmbeddedEngineOptions } from '../../src/search/embedded-engine';

export const ALICE = '1001';
export const BOB = '1002';

export interface SearchFixture {
  dir: string;
  db: Sqlite;
  hot: HotStore;
  engine: EmbeddedEngine;
  /** Creates posts by `author` with these texts; ids from `firstId` up. Returns the ids. */
  post(author: string, texts: string[], firstId: bigint): string[];
  remove(author: string, id: string): void;
}

export async function searchFixture(t: Teardown, engineOptions: Partial<EmbeddedEngineOptions> = {}): Promise<SearchFixture> {
  const { dir, db } = tempStore(t, 'perch-search-');
  addUsers(db, { [ALICE]: 'alice', [BOB]: 'bob' });
  const hot = openHotStore(dir);
  const engine = EmbeddedEngine.open(dir, { capacity: 20_000, ...engineOptions });
  t.teardown(async () => {
    engine.close();
    await hot.close();
  });
  const group = groupCommit(db);
  return {
    dir,
    db,
    hot,
    engine,
    post(author, texts, firstId) {
      const ids = texts.map((_, i) => (firstId + BigInt(i)).toString());
      commitAll(
        group,
        texts.map((text, i): [string, unknown] => ['createPost', { id: ids[i], authorId: author, text, mediaIds: [], replyTo: null, createdAt: new Date().toISOString() }]),
      );
      return ids;
    },
    remove(author, id) {
      commitAll(group, [['deletePost', { userId: author, postId: id, now: new Date().toISOString() }]]);
    },
  };
}
