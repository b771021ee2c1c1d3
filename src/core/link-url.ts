// Validation of a short link's target URL, and the registrable domain of a host (for the
// anomaly detector's "many links to one domain" rule). Pure: no I/O.
import { isIP } from 'node:net';

export const MAX_URL_LENGTH = 2048;

/**
 * Multi-label public suffixes under which a name is registered one level deeper (example.co.uk).
 * A small built-in list, not the full Public Suffix List: a host under a suffix missing here is
 * grouped one level too high (all of *.github.io count as github.io), which only makes the
 * anomaly detector stricter for that suffix.
 */
const MULTI_LABEL_SUFFIXES: ReadonlySet<string> = new Set([
  'co.uk', 'org.uk', 'me.uk', 'ltd.uk', 'plc.uk', 'net.uk', 'ac.uk', 'gov.uk', 'sch.uk',
  'com.au', 'net.au', 'org.au', 'edu.au', 'gov.au', 'id.au',
  'co.nz', 'org.nz', 'net.nz', 'govt.nz', 'ac.nz',
  'co.jp', 'ne.jp', 'or.jp', 'ac.jp', 'go.jp',
  'co.kr', 'or.kr', 'co.in', 'net.in', 'org.in', 'gov.in', 'ac.in',
  'com.br', 'net.br', 'org.br', 'gov.br', 'com.cn', 'net.cn', 'org.cn', 'gov.cn',
  'com.mx', 'org.mx', 'gob.mx', 'com.ar', 'com.tr', 'org.tr', 'gov.tr', 'com.tw', 'org.tw',
  'com.hk', 'org.hk', 'com.sg', 'org.sg', 'edu.sg', 'co.za', 'org.za', 'gov.za',
  'co.il', 'org.il', 'ac.il', 'com.ua', 'com.pl', 'com.ru', 'co.id', 'or.id', 'co.th', 'in.th',
  'com.my', 'com.ph', 'com.vn', 'com.eg', 'com.sa', 'com.pk', 'com.ng',
  'github.io', 'gitlab.io', 'herokuapp.com', 'netlify.app', 'vercel.app', 'pages.dev', 'workers.dev',
  'blogspot.com', 'appspot.com', 'azurewebsites.net', 'cloudfront.net', 'web.app', 'firebaseapp.com',
]);

function isIpLiteral(host: string): boolean {
  if (host.startsWith('[')) return true;
  const parts = host.split('.');
  return parts.length === 4 && parts.every((p) => p !== '' && /^\d+$/.test(p));
}

/** Lower-cased host without a trailing dot. */
export function normaliseHost(host: string): string {
  const h = host.toLowerCase();
  return h.endsWith('.') ? h.slice(0, -1) : h;
}

/** The name a registrant controls: example.com for a.b.example.com, example.co.uk for x.example.co.uk. */
export function registrableDomain(host: string): string {
  const h = normaliseHost(host);
  if (isIpLiteral(h)) return h;
  const labels = h.split('.');
  if (labels.length <= 2) return h;
  const lastTwo = labels.slice(-2).join('.');
  if (MULTI_LABEL_SUFFIXES.has(lastTwo)) return labels.slice(-3).join('.');
  return lastTwo;
}

/** A host as a URL's hostname gives it, lower-cased: dot-separated labels, or an IPv6 literal. */
const HOST_NAME = /^(?:\[[0-9a-f:.]+\]|[a-z0-9_-]+(?:\.[a-z0-9_-]+)*)$/;

/**
 * The host a blocklist entry names, in the form URL hosts take: an operator may write
 * `evil.example`, `.evil.example`, `*.evil.example`, `https://evil.example/path` or an
 * internationalised name (`bücher.example`, compared as `xn--bcher-kva.example`). The name is read
 * by the URL parser, as a target's host is, so that both are written alike (`2130706433` is
 * `127.0.0.1`). '' when the entry names no host: nothing but a host (or a URL) is taken, since
 * anything else (`evil.example/path`, `*`, a port without a scheme) would silently block nothing;
 * the configuration refuses such an entry (config.ts).
 */
export function blocklistHost(entry: string): string {
  const e = entry.trim();
  let host: string;
  try {
    if (e.includes('://')) host = new URL(e).hostname;
    else {
      const name = e.replace(/^\*?\./, '').replace(/\/$/, '');
      // An IPv6 address is written in brackets in a URL, and its host compares so.
      const u = new URL(`http://${isIP(name) === 6 ? `[${name}]` : name}/`);
      if (u.pathname !== '/' || u.port !== '' || u.search !== '' || u.hash !== '' || u.username !== '' || u.password !== '') return '';
      host = u.hostname;
    }
  } catch {
    return '';
  }
  host = normaliseHost(host);
  return HOST_NAME.test(host) ? host : '';
}

/** Whether `host` is the host of blocklist `entry` or a subdomain of it. */
export function hostMatches(host: string, entry: string): boolean {
  const h = normaliseHost(host);
  const e = blocklistHost(entry);
  if (!e) return false;
  return h === e || h.endsWith('.' + e);
}

export interface TargetRules {
  /** The service's own public origin (server.public_origin). */
  publicOrigin: string;
  blocklist: readonly string[];
}

export type TargetCheck = { ok: true; url: string; host: string; domain: string } | { ok: false; message: string };

/** Visible ASCII only: such a URL can be stored and sent in a Location header exactly as given. */
function isPlainAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f) return false;
  }
  return true;
}

/**
 * Whether the authority of a URL as written has an `@`, i.e. a user-info part, even an empty one
 * (`https://@host/`, which the URL parser drops). Backslashes do not end the authority here,
 * although WHATWG parsers treat them as slashes: `https://good.example\@evil.example/` goes to
 * good.example in a browser and to evil.example in other clients, and such a link is refused.
 */
function hasUserinfo(input: string): boolean {
  let i = input.indexOf(':') + 1;
  while (i < input.length && (input[i] === '/' || input[i] === '\\')) i++;
  for (; i < input.length; i++) {
    const c = input[i];
    if (c === '@') return true;
    if (c === '/' || c === '?' || c === '#') return false;
  }
  return false;
}

/**
 * The authority of a URL as written: what follows `scheme://` up to the first `/`, `?` or `#`;
 * null when the scheme is not followed by `//`. WHATWG parsers find a host in `http:///x`,
 * `https:example.com` and `http:\\example.com`, where other clients find none (or another one):
 * a link is stored as given, so it must be written the way every client reads alike.
 */
function writtenAuthority(input: string): string | null {
  const afterScheme = input.indexOf(':') + 1;
  if (input.slice(afterScheme, afterScheme + 2) !== '//') return null;
  const rest = input.slice(afterScheme + 2);
  const end = rest.search(/[/?#]/);
  return end === -1 ? rest : rest.slice(0, end);
}

/** The loopback names and addresses: each reaches the machine perch runs on. */
function isLoopbackHost(host: string): boolean {
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  // Addresses come normalised by the URL parser: 2130706433 and 0x7f.1 are 127.0.0.1 by now.
  if (host.startsWith('127.') && isIpLiteral(host)) return true;
  // 0.0.0.0 and :: mean "this host" to a client on it; ::ffff:7f00:0/104 is IPv4 loopback mapped.
  return host === '0.0.0.0' || host === '[::1]' || host === '[::]' || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(host);
}

function sameHost(a: string, b: string): boolean {
  return a === b || (isLoopbackHost(a) && isLoopbackHost(b));
}

function effectivePort(u: URL): number {
  if (u.port !== '') return Number(u.port);
  return u.protocol === 'https:' ? 443 : 80;
}

function onDefaultPort(u: URL): boolean {
  const port = effectivePort(u);
  return port === 80 || port === 443;
}

/**
 * Whether `target` reaches the service at `publicOrigin`: the same host (loopback aliases counted
 * as one host) and the same port, whatever the scheme (one port speaks one protocol), or both on
 * the default ports (80, 443), because a host that serves https usually answers http with a
 * redirect to it. Another port of the same host is another service.
 */
function pointsAtOrigin(target: URL, publicOrigin: string): boolean {
  let own: URL;
  try {
    own = new URL(publicOrigin);
  } catch {
    return false;
  }
  const ownHost = normaliseHost(own.hostname);
  if (!ownHost || !sameHost(normaliseHost(target.hostname), ownHost)) return false;
  return effectivePort(target) === effectivePort(own) || (onDefaultPort(target) && onDefaultPort(own));
}

/**
 * Checks a target URL against the contract: absolute http(s), at most 2048 characters, with a
 * host written as `scheme://host` (writtenAuthority), without credentials, not the service
 * itself (pointsAtOrigin), not on the blocklist (subdomains included). The URL is kept as given
 * when it is plain visible ASCII; otherwise its normalised, percent-encoded form is stored so the
 * Location header is always valid.
 */
export function checkTargetUrl(input: string, rules: TargetRules): TargetCheck {
  if (input.length > MAX_URL_LENGTH) return { ok: false, message: `must be at most ${MAX_URL_LENGTH} characters` };
  let parsed: URL;
  try {
    parsed = new URL(input);
  } catch {
    return { ok: false, message: 'must be an absolute http or https URL' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { ok: false, message: 'must use http or https' };
  const host = normaliseHost(parsed.hostname);
  if (!host) return { ok: false, message: 'must have a host' };
  if (parsed.username !== '' || parsed.password !== '' || hasUserinfo(input)) {
    return { ok: false, message: 'must not contain credentials (user:password@ before the host)' };
  }
  const authority = writtenAuthority(input.trim());
  if (!authority) return { ok: false, message: 'must have a host, written as scheme://host/…' };
  if (authority.includes('\\')) return { ok: false, message: 'must not have a backslash before its path (clients read it differently)' };
  if (pointsAtOrigin(parsed, rules.publicOrigin)) return { ok: false, message: 'must not point at this service' };
  for (const entry of rules.blocklist) {
    if (hostMatches(host, entry)) return { ok: false, message: 'points at a blocked domain' };
  }
  const url = isPlainAscii(input) ? input : parsed.href;
  // The limit holds for what is stored and sent in Location. A URL short as sent can pass it once
  // encoded (an `é` is 6 characters as `%C3%A9`): the message says so, or it would read as wrong.
  if (url.length > MAX_URL_LENGTH) {
    return { ok: false, message: `must be at most ${MAX_URL_LENGTH} characters once percent-encoded, as it is stored (spaces and non-ASCII characters count as their %XX escapes): this one is ${url.length}` };
  }
  return { ok: true, url, host, domain: registrableDomain(host) };
}
