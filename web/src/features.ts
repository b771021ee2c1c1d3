// Which parts of the API this server has. Screens for capabilities that arrive later
// (notifications, search, reply threads, the link extras) are shown only when the server has
// their endpoints, so the client never offers what the server cannot do.
//
// The server says which in the page it serves: `<meta name="perch-features">` lists the features
// whose routes it serves (src/web/features.ts), so the client knows before its first render and
// asks nothing. A page without the list (not served by perch) offers none of them.
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

/** The features named in a page's list (space-separated names, as the server writes them). */
export function parseFeatures(list: string): Features {
  const names = new Set(list.split(/\s+/).filter(Boolean));
  return { notifications: names.has('notifications'), search: names.has('search'), replies: names.has('replies'), linkExtras: names.has('link-extras') };
}

function pageFeatures(): Features {
  const list = typeof document === 'undefined' ? '' : (document.querySelector('meta[name="perch-features"]')?.getAttribute('content') ?? '');
  return parseFeatures(list);
}

export const features = createStore<Features>(pageFeatures());
