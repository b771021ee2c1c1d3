// Whom the signed-in user follows. A user's record does not say whether the caller follows them,
// so the client reads its own following list once (GET /api/users/{me}/following, pages of 100)
// and keeps the set current as it follows and unfollows.
import { api, withQuery, type Page, type User } from './api';

let loaded: { userId: string; ids: Set<string> } | null = null;
let loading: Promise<Set<string>> | null = null;

export function followingSet(userId: string): Promise<Set<string>> {
  if (loaded && loaded.userId === userId) return Promise.resolve(loaded.ids);
  if (!loading) {
    loading = (async () => {
      const ids = new Set<string>();
      let cursor: string | null = null;
      do {
        const page: Page<User> = await api.get<Page<User>>(withQuery(`/api/users/${userId}/following`, { limit: 100, cursor }));
        for (const u of page.items) ids.add(u.id);
        cursor = page.next_cursor;
      } while (cursor);
      loaded = { userId, ids };
      return ids;
    })().finally(() => (loading = null));
  }
  return loading;
}

export function noteFollowing(userId: string, otherId: string, following: boolean): void {
  if (!loaded || loaded.userId !== userId) return;
  if (following) loaded.ids.add(otherId);
  else loaded.ids.delete(otherId);
}

/** Forgets everything (signing out). */
export function resetFollowing(): void {
  loaded = null;
}
