// The durable writes of the short-link service as named operations on plain data, run by the
// writer inside its group commits like every capability's. Creating, editing and deleting a link
// therefore never block an HTTP thread's event loop (and its redirects) in an fsync or in
// SQLite's busy handler: the writer syncs on libuv's pool and waits for a taken write lock on a
// timer (writer/writer.ts).
import { notFound } from '../http/errors';
import type { Sqlite } from '../store/sqlite';
import { LinkStore, type LinkRow, type NewLink } from './store';

export function linkWrites(db: Sqlite) {
  const store = new LinkStore(db);
  return {
    insertLink(a: NewLink): LinkRow {
      return store.insert(a);
    },

    // Ownership was checked by the HTTP thread (a link never changes owner); a link deleted since
    // then is gone for this request too.
    updateLink(a: { code: string; url: string; domain: string; expiresMs: number | null; nowMs: number }): void {
      if (!store.update(a.code, a.url, a.domain, a.expiresMs, a.nowMs)) throw notFound('No such link.');
    },

    removeLink(a: { code: string }): void {
      if (!store.remove(a.code)) throw notFound('No such link.');
    },
  };
}

export type LinkWrites = ReturnType<typeof linkWrites>;
