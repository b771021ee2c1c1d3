// User handles: 1–30 of [A-Za-z0-9_], unique regardless of case.
export const HANDLE_PATTERN = /^[A-Za-z0-9_]{1,30}$/;

export function isValidHandle(handle: string): boolean {
  return HANDLE_PATTERN.test(handle);
}

/** The form under which handles are compared for uniqueness. */
export function handleKey(handle: string): string {
  return handle.toLowerCase();
}
