// Which parts of the API this server has. Screens for capabilities that arrive later
// (notifications, search, reply threads, the link extras) are shown only once the server has
// their endpoints, so the client never offers what the server cannot do.
//
// The probe asks whether a path exists without touching anything: a PUT, which none of these
// paths serves. perch's router answers a path it knows with 405 Method Not Allowed (and Allow),
// and one it does not know with 404; CONTRACT.md §1 fixes both answers. No key is sent, nothing
// is read or counted, no rate limit is spent.
import { createStore } from './store';

export interface Features {
  /** GET /api/notifications and GET /ws. */
  notifications: boolean;
  /** GET /api/search and GET /api/suggest. */
  search: boolean;
  /** GET /api/posts/{id}/replies. */
  replies: boolean;
  /** Aliases, passwords, QR codes, browser and OS counts: GET /api/links/{code}/qr. */
  linkExtras: boolean;
}

const PROBES: Record<keyof Features, string> = {
  notifications: '/api/notifications',
  search: '/api/suggest',
  replies: '/api/posts/0/replies',
  linkExtras: '/api/links/0000/qr',
};

export const features = createStore<Features>({ notifications: false, search: false, replies: false, linkExtras: false });

async function pathExists(path: string): Promise<boolean> {
  try {
    const res = await fetch(path, { method: 'PUT', credentials: 'omit', cache: 'no-store' });
    return res.status === 405;
  } catch {
    return false;
  }
}

export async function probeFeatures(): Promise<Features> {
  const names = Object.keys(PROBES) as (keyof Features)[];
  const answers = await Promise.all(names.map((n) => pathExists(PROBES[n])));
  const found = {} as Features;
  names.forEach((n, i) => (found[n] = answers[i]));
  features.set(found);
  return found;
}
