// Which posts the signed-in user liked. The API answers like counts but not whether the caller
// liked a post, so the client remembers the likes made in this browser (per user, the newest
// 2,000). Liking is idempotent on the server, so a like made elsewhere and pressed again here
// changes nothing there; the count shown is always re-read from the server after a toggle.
import { forgetStoredRecords } from './stored-records';

const LIMIT = 2000;

const STORAGE_PREFIX = 'perch.likes.';

function storageKey(userId: string): string {
  return `${STORAGE_PREFIX}${userId}`;
}

/**
 * When a session ends in this browser: the API tells no one who liked what, so what this browser
 * remembers of it goes with the session rather than stay for the next person at it.
 */
export function forgetLikes(): void {
  forgetStoredRecords(STORAGE_PREFIX);
}

function read(userId: string): string[] {
  try {
    const v = JSON.parse(localStorage.getItem(storageKey(userId)) ?? '[]');
    return Array.isArray(v) ? v.filter((x) => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

export function isLiked(userId: string, postId: string): boolean {
  return read(userId).includes(postId);
}

export function rememberLike(userId: string, postId: string, liked: boolean): void {
  const ids = read(userId).filter((id) => id !== postId);
  if (liked) ids.push(postId);
  try {
    localStorage.setItem(storageKey(userId), JSON.stringify(ids.slice(-LIMIT)));
  } catch {
    // Not remembered: the button shows the state of this page only.
  }
}
