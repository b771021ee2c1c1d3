// The one way the client talks to perch's API: the key goes in the Authorization header, JSON in
// and out, and every failure becomes an ApiError whose text is the server's own sentence.
import type { NotificationItem } from './notification-text';

export type { NotificationItem } from './notification-text';

/** Shapes of the API's answers, as CONTRACT.md and docs/ describe them. */
export interface User {
  id: string;
  handle: string;
  created_at: string;
  followers_count: number;
  following_count: number;
  /** GET /api/me only. */
  unread_notifications?: number;
}

export interface Post {
  id: string;
  text: string;
  author_id: string;
  media_ids: string[];
  reply_to: string | null;
  created_at: string;
  like_count?: number;
  reply_count?: number;
  author?: { id: string; handle: string };
}

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export interface LinkSummary {
  short_code: string;
  short_url: string;
  url: string;
  created_at: string;
  updated_at?: string;
  expires_at: string | null;
  status?: 'active' | 'expired';
  password_protected?: boolean;
}

export interface NameCount {
  name: string;
  count: number;
}

export interface LinkDetails extends LinkSummary {
  updated_at: string;
  status: 'active' | 'expired';
  clicks: {
    total: number;
    last_24h: number;
    bots: number;
    daily: { date: string; count: number }[];
    referrers: { referrer: string; count: number }[];
    browsers: NameCount[];
    os: NameCount[];
    /** Visits brought by `perch import`, part of `total` and `bots` but of no day. */
    imported?: { total: number; bots: number };
  };
  password_protected: boolean;
}

export interface NotificationPreferences {
  muted_post_ids: string[];
  priority_user_ids: string[];
  types: { like: boolean; reply: boolean; follow: boolean };
}

export type NotificationPage = Page<NotificationItem>;

export interface Suggestion {
  query: string;
  volume: number;
}

export interface PushSubscriptionRecord {
  id: string;
  endpoint: string;
  created_at: string;
}

export interface Media {
  id: string;
  content_type: string;
  size: number;
  url: string;
}

export interface ErrorDetail {
  path: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfterSeconds: number | null = null,
    readonly details: ErrorDetail[] = [],
    /** A 500's `request_id` (or its X-Request-Id): what the server's log knows it by. */
    readonly requestId: string | null = null,
  ) {
    super(message);
  }
}

/** A request that never reached perch (network down, server stopped). */
export class NetworkError extends Error {}

/** A failure the client found itself and explains in a sentence (a file too large, a browser refusing). */
export class Problem extends Error {}

/** The sentence a person sees for a failure: the server's message, and when to retry. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) {
    let text = err.message;
    // The id someone reporting the failure can quote, unless the message already holds it.
    if (err.requestId && !text.includes(err.requestId)) text = `${text.replace(/\.$/, '')} (request id ${err.requestId}).`;
    // A 400 about one field often says it in its message already ("expires_at: must be in the
    // future"): each detail is added only when the message does not hold it.
    const said = text.toLowerCase();
    const fields = err.details
      .filter((d) => d.message)
      .map((d) => (d.path ? `${d.path}: ${d.message}` : d.message))
      .filter((line) => !said.includes(line.toLowerCase()));
    if (fields.length > 0) text += ' ' + fields.join('; ') + '.';
    if ((err.status === 429 || err.status === 503) && err.retryAfterSeconds) {
      text += ` Try again in ${waitText(err.retryAfterSeconds)}.`;
    }
    return text;
  }
  if (err instanceof NetworkError || err instanceof Problem) return err.message;
  return 'Something went wrong in the web client: ' + (err instanceof Error ? err.message : String(err));
}

/**
 * A wait as a person reads it: seconds up to a minute and a half ("3 seconds"), then about so
 * many minutes, then hours ("about 10 minutes" rather than "591 seconds").
 */
export function waitText(seconds: number): string {
  const s = Math.max(1, Math.ceil(seconds));
  if (s < 90) return `${s} second${s === 1 ? '' : 's'}`;
  if (s < 5400) return `about ${Math.round(s / 60)} minutes`;
  const hours = Math.round(s / 3600);
  return `about ${hours} hour${hours === 1 ? '' : 's'}`;
}

/**
 * Whether asking again as it is may succeed: the request never reached perch, perch failed (5xx),
 * or a rate limit said when to come back (429). Any other answer (a 400, a 404…) would be the same
 * again.
 */
export function retryable(err: unknown): boolean {
  if (err instanceof NetworkError) return true;
  if (err instanceof ApiError) return err.status === 429 || err.status >= 500;
  return false;
}

/** The message the server gave for one field (`details[].path`), or for a 409 on `conflictPath`. */
export function fieldError(err: unknown, path: string, conflictPath?: string): string | null {
  if (!(err instanceof ApiError)) return null;
  if (err.status === 409 && conflictPath === path) return err.message;
  return err.details.find((d) => d.path === path)?.message ?? null;
}

/** A form's fields that show their own errors: the API's path of each, and its label. */
export interface FormFields {
  labels: Record<string, string>;
  /** The field a 409 is about (an alias taken). */
  conflictPath?: string;
}

/**
 * The sentence under a form whose fields say their own errors (fieldError): it names the fields
 * marked, by their labels, instead of saying their messages a second time with the API's field
 * names, and adds what no field shows. A failure no field shows reads as describeError says it.
 */
export function formErrorText(err: unknown, fields: FormFields): string {
  if (!(err instanceof ApiError)) return describeError(err);
  const marked = Object.keys(fields.labels).filter((path) => fieldError(err, path, fields.conflictPath) !== null);
  if (marked.length === 0) return describeError(err);
  const rest = err.status === 409 ? [] : err.details.filter((d) => d.message && !marked.includes(d.path));
  const names = marked.map((path) => fields.labels[path]);
  let text = `Check the field${names.length === 1 ? '' : 's'} marked above: ${names.join(', ')}.`;
  if (rest.length > 0) text += ' ' + rest.map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)).join('; ') + '.';
  return text;
}

export interface RequestOptions {
  json?: unknown;
  body?: Blob;
  contentType?: string;
  /** Sign with this key instead of the session's (signing in). */
  key?: string | null;
}

let sessionKey: string | null = null;
let onUnauthorized: (err: ApiError) => void = () => {};

/** Set by the session: the key to sign with, and what a 401 of a signed request does. */
export function configureApi(key: string | null, unauthorized: (err: ApiError) => void): void {
  sessionKey = key;
  onUnauthorized = unauthorized;
}

/** Sends a request and answers the response when it is a success; any failure is thrown. */
async function send(method: string, path: string, opts: RequestOptions, accept: string): Promise<Response> {
  const headers: Record<string, string> = { Accept: accept };
  const key = opts.key !== undefined ? opts.key : sessionKey;
  if (key) headers.Authorization = `Bearer ${key}`;
  let body: BodyInit | undefined;
  if (opts.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.json);
  } else if (opts.body) {
    headers['Content-Type'] = opts.contentType ?? opts.body.type;
    body = opts.body;
  }
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body, credentials: 'omit', cache: 'no-store' });
  } catch {
    throw new NetworkError('Could not reach perch. Check the connection and try again.');
  }
  if (res.ok) return res;
  const text = await res.text().catch(() => '');
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  const e = (parsed ?? {}) as { error?: string; message?: string; retry_after_seconds?: number; details?: ErrorDetail[]; request_id?: unknown };
  const retry = e.retry_after_seconds ?? (Number(res.headers.get('Retry-After')) || null);
  const err = new ApiError(
    res.status,
    e.error ?? 'http_' + res.status,
    e.message ?? `The server answered ${res.status} ${res.statusText}.`,
    retry,
    Array.isArray(e.details) ? e.details : [],
    typeof e.request_id === 'string' && e.request_id ? e.request_id : res.headers.get('X-Request-Id') || null,
  );
  // A key that stopped working (revoked) ends the session; signing in handles its own 401.
  if (res.status === 401 && opts.key === undefined && sessionKey) onUnauthorized(err);
  throw err;
}

export async function request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
  const res = await send(method, path, opts, 'application/json');
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  try {
    return (text ? JSON.parse(text) : undefined) as T;
  } catch {
    throw new NetworkError('perch answered something that is not JSON. Try again.');
  }
}

/** A file the API answers (a QR code, an export), read whole, with the name it suggests. */
export async function requestFile(path: string, accept = '*/*'): Promise<{ blob: Blob; filename: string | null }> {
  const res = await send('GET', path, {}, accept);
  const disposition = res.headers.get('Content-Disposition') ?? '';
  const m = /filename="([^"]+)"/.exec(disposition);
  let blob: Blob;
  try {
    blob = await res.blob();
  } catch {
    throw new NetworkError('The download was cut off. Try again.');
  }
  return { blob, filename: m ? m[1] : null };
}

export const api = {
  get: <T>(path: string) => request<T>('GET', path),
  post: <T>(path: string, json?: unknown) => request<T>('POST', path, json === undefined ? {} : { json }),
  patch: <T>(path: string, json: unknown) => request<T>('PATCH', path, { json }),
  del: (path: string) => request<void>('DELETE', path),
  put: <T>(path: string, json: unknown) => request<T>('PUT', path, { json }),
  upload: (file: Blob) => request<Media>('POST', '/api/media', { body: file }),
  deleteMedia: (id: string) => request<void>('DELETE', `/api/media/${encodeURIComponent(id)}`),
};

/** A path with a query string, leaving out absent values. */
export function withQuery(path: string, query: Record<string, string | number | null | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== null && v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/** A user path segment by handle (`@alice`); handles are word characters, escaped all the same. */
export function byHandle(handle: string): string {
  return '@' + encodeURIComponent(handle);
}
