// The durable writes of the short-link service as named operations on plain data, run by the
// writer inside its group commits like the microblog's (social/writes.ts). Creating, editing and
// deleting a link therefore never block an HTTP thread's event loop (and its redirects) in an
// fsync or in SQLite's busy handler: the writer syncs on libuv's pool and waits for a taken
// write lock on a timer (server/writer.ts).
import { notFound } from '../http/errors';
import type { LinkRow, LinkStore, NewLink } from './store';

export interface LinkWriteArgs {
  insertLink: NewLink;
  updateLink: { code: string; url: string; domain: string; expiresMs: number | null; nowMs: number };
  removeLink: { code: string };
}

export interface LinkWriteResults {
  insertLink: LinkRow;
  updateLink: void;
  removeLink: void;
}

type Ops = { [K in keyof LinkWriteArgs]: (store: LinkStore, args: LinkWriteArgs[K]) => LinkWriteResults[K] };

export const LINK_WRITE_OPS: Ops = {
  insertLink(store, a) {
    return store.insert(a);
  },

  // Ownership was checked by the HTTP thread (a link never changes owner); a link deleted since
  // then is gone for this request too.
  updateLink(store, a) {
    if (!store.update(a.code, a.url, a.domain, a.expiresMs, a.nowMs)) throw notFound('No such link.');
  },

  removeLink(store, a) {
    if (!store.remove(a.code)) throw notFound('No such link.');
  },
};
