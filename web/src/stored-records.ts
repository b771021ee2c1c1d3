// What the client keeps in localStorage of each user, under key prefixes of its own modules
// (likes.ts, push.ts).

/** Removes every stored record whose key starts with `prefix`: a session's end takes them. */
export function forgetStoredRecords(prefix: string): void {
  try {
    for (const key of Object.keys(localStorage)) if (key.startsWith(prefix)) localStorage.removeItem(key);
  } catch {
    // Storage unavailable: nothing was remembered.
  }
}
