// The durable writes of the short-link service as named operations on plain data, run by the
// writer inside its group commits like every capability's. Creating, editing and deleting a link
// therefore never block an HTTP thread's event loop (and its redirects) in an fsync or in
// SQLite's busy handler: the writer syncs on libuv's pool and waits for a taken write lock on a
// timer (writer/writer.ts).
import { conflict, notFound } from '../http/errors';
import type { Sqlite } from '../store/sqlite';
import { LinkStore, type LinkEdit, type LinkRow, type NewLink } from './store';

export const ALIAS_TAKEN = 'This code is already in use; choose another alias.';

export function linkWrites(db: Sqlite) {
  const store = new LinkStore(db);
  return {
    /** A link under a code drawn from the pool (registered as issued when it was minted). */
    insertLink(a: NewLink): LinkRow {
      return store.insert(a);
    },

    /**
     * A link under an alias. The HTTP thread checked the code before taking a creation from the
     * limits; this checks again inside the transaction, where no other creation can come between.
     * `freedBeforeMs`: a deleted link's code is free again if it was deleted before this instant.
     */
    insertAlias(a: NewLink & { freedBeforeMs: number }): LinkRow {
      if (store.codeTaken(a.code, a.freedBeforeMs)) throw conflict(ALIAS_TAKEN);
      return store.insertAlias(a);
    },

    // Ownership was checked by the HTTP thread (a link never changes owner); a link deleted since
    // then is gone for this request too. The edit's fields only (LinkStore.update): the others
    // stay as the row has them now.
    updateLink(a: { code: string; edit: LinkEdit; nowMs: number }): void {
      if (!store.update(a.code, a.edit, a.nowMs)) throw notFound('No such link.');
    },

    removeLink(a: { code: string; nowMs?: number }): void {
      if (!store.remove(a.code, a.nowMs)) throw notFound('No such link.');
    },
  };
}

export type LinkWrites = ReturnType<typeof linkWrites>;
