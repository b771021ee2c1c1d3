// Hash routing (`/#/links/abc`): the server serves one HTML page at `/` and nothing else as HTML,
// so every screen must be reachable from it; docs/web.md says why a hash rather than paths.
import { useEffect, useState } from 'preact/hooks';

export function currentPath(): string {
  const hash = window.location.hash.replace(/^#/, '');
  return hash.startsWith('/') ? hash : '/';
}

/** The `href` of an in-app link. */
export function href(path: string): string {
  return '#' + path;
}

export function navigate(path: string): void {
  if (currentPath() === path) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else window.location.hash = path;
}

export function usePath(): string {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const onChange = () => setPath(currentPath());
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return path;
}

/** The query part of a path (`/search?q=café&sort=recent`). */
export function queryOf(path: string): URLSearchParams {
  const i = path.indexOf('?');
  return new URLSearchParams(i === -1 ? '' : path.slice(i + 1));
}

/** A path with a query string, leaving out empty values. */
export function withParams(path: string, params: Record<string, string | null | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/**
 * Matches `path` against a pattern like `/links/:code`: the decoded parameters, or null. A
 * parameter is one non-empty segment.
 */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/').filter(Boolean);
  const got = path.split('?')[0].split('/').filter(Boolean);
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(':')) {
      try {
        params[want[i].slice(1)] = decodeURIComponent(got[i]);
      } catch {
        return null;
      }
    } else if (want[i] !== got[i]) {
      return null;
    }
  }
  return params;
}
