// Who is signed in. The API key is kept in localStorage (docs/web.md says why) and sent as a
// Bearer header by api.ts; GET /api/me checks it and names the user.
import { ApiError, configureApi, request, type User } from './api';
import { forgetLikes } from './likes';
import { endPushHere } from './push';
import { createStore } from './store';

const KEY_STORAGE = 'perch.api_key';

export interface Session {
  key: string | null;
  me: User | null;
  /** Why the last session ended, shown on the sign-in screen (a key revoked meanwhile). */
  endedBecause: string | null;
}

export const session = createStore<Session>({ key: null, me: null, endedBecause: null });

function storedKey(): string | null {
  try {
    return localStorage.getItem(KEY_STORAGE);
  } catch {
    return null;
  }
}

/** Sessions begun in this tab so far: each sign-in, resumed key and session end starts another. */
let sessions = 0;

/**
 * A check that the session of this moment is still this tab's: false once it has ended, even if
 * the same user has signed in again since. For work that writes what the browser keeps of a user
 * after an await, which a session's end clears.
 */
export function thisSession(): () => boolean {
  const current = sessions;
  return () => current === sessions && session.get().key !== null;
}

function apply(next: Session): void {
  if (next.key !== session.get().key) sessions++;
  // A key the server refuses is forgotten only if it is still the stored one: another tab may
  // have signed in with another key meanwhile.
  configureApi(next.key, (err) => endSession(err.message, next.key));
  session.set(next);
}

/**
 * Ends this tab's session, saying why, and forgets the stored key; with `refused` (a key the server
 * refused), only if the stored key is still that one.
 */
function endSession(reason: string | null, refused?: string | null): void {
  try {
    if (refused === undefined || localStorage.getItem(KEY_STORAGE) === refused) localStorage.removeItem(KEY_STORAGE);
  } catch {
    // Nothing stored.
  }
  // What this browser keeps of the user goes with its session (docs/web.md, "The key"); not when
  // another tab has signed in meanwhile (a key is still stored), whose user it would be.
  if (storedKey() === null) {
    forgetLikes();
    void endPushHere();
  }
  apply({ key: null, me: null, endedBecause: reason });
}

/** Checks a key with GET /api/me; on success keeps it and signs in. Throws the API's error. */
export async function signIn(key: string): Promise<User> {
  const me = await request<User>('GET', '/api/me', { key });
  try {
    localStorage.setItem(KEY_STORAGE, key);
  } catch {
    // Storage refused (private mode): the session lasts as long as the page.
  }
  apply({ key, me, endedBecause: null });
  return me;
}

export function signOut(reason: string | null = null): void {
  endSession(reason);
}

/**
 * At start: a stored key is checked again. A 401 (revoked meanwhile) signs out with the server's
 * message; a network failure keeps the key and reports the error, so a restart of the server does
 * not sign anybody out.
 */
export async function resume(): Promise<void> {
  const key = storedKey();
  if (!key) return apply({ key: null, me: null, endedBecause: null });
  let me: User;
  try {
    me = await request<User>('GET', '/api/me', { key });
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return endSession(err.message, key);
    throw err;
  }
  // Another tab signed out or in while the key was being checked: what is stored now decides.
  // (Written back here, the key would undo that tab's sign-out.)
  if (storedKey() !== key) return resume();
  apply({ key, me, endedBecause: null });
}

/**
 * Keeps this tab's session the browser's: when another tab of the same origin signs out (the
 * stored key removed) this one signs out too, instead of going on with the key it holds; when
 * another tab signs in with another key, this one starts again with it (a reload: nothing the
 * screens hold of the previous user stays). Returns the unsubscribe.
 */
export function followOtherTabs(): () => void {
  const onStorage = (e: StorageEvent) => {
    // null: the whole storage was cleared (by the user, or the browser's "clear site data").
    if (e.key !== KEY_STORAGE && e.key !== null) return;
    const stored = storedKey();
    const current = session.get().key;
    if (stored === current) return;
    // Ended here only: there is no stored key left to forget.
    if (stored === null) return apply({ key: null, me: null, endedBecause: 'The session ended in another tab.' });
    location.reload();
  };
  window.addEventListener('storage', onStorage);
  return () => window.removeEventListener('storage', onStorage);
}

/** Updates the signed-in user's own record (counts change when following). */
export function setMe(me: User): void {
  const s = session.get();
  if (s.key) session.set({ ...s, me });
}
