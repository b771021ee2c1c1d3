// The service's public origin (server.public_origin): what short URLs start with, what the
// own-origin guard refuses and what the web client's policy allows. Not configured (""), it is
// derived from the address the server really listens on, so `--port 0` or any other port gives
// short URLs that lead back to this server. Configured, it is checked against that address: an
// origin naming this machine directly (loopback or a listening address) on another port, or with
// https on perch's plain HTTP port, leads nowhere and deserves a warning. An origin naming anything
// else is taken to be a reverse proxy in front of perch and is not second-guessed.
import { isIP } from 'node:net';

/** Wildcard listening addresses: every interface of the machine. */
export function isWildcardHost(host: string): boolean {
  const h = bare(host);
  return h === '' || h === '0.0.0.0' || h === '::' || h === '0:0:0:0:0:0:0:0';
}

export function isLoopbackHost(host: string): boolean {
  const h = bare(host).toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (h.startsWith('::ffff:') && isIP(h.slice(7)) === 4) return h.slice(7).startsWith('127.');
  return h === '::1' || h === '0:0:0:0:0:0:0:1';
}

/** A host without the brackets an IPv6 literal has in a URL. */
function bare(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** `host` as it is written in a URL. */
function urlHost(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}

/**
 * The origin of a server listening on `host`:`port`. Loopback addresses are named `localhost`
 * (so the default 127.0.0.1:8080 gives `http://localhost:8080`, the contract's default); a
 * wildcard address is named by the machine's name, the best guess there is without configuration.
 */
export function derivePublicOrigin(host: string, port: number, machineName: string): string {
  const h = bare(host);
  const name = isLoopbackHost(h) ? 'localhost' : isWildcardHost(h) ? machineName : h;
  return new URL(`http://${urlHost(name)}:${port}`).origin;
}

/** Whether `value` is an http(s) origin: scheme, host, optional port, nothing after them. */
export function isHttpOrigin(value: string): boolean {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return false;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return false;
  if (u.username || u.password || u.search || u.hash) return false;
  return u.pathname === '/' && !/^[a-z]+:\/\/[^/]*\/./i.test(value);
}

function effectivePort(u: URL): number {
  return u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
}

export interface ListeningAddress {
  host: string;
  port: number;
  /** The machine's own addresses (every interface), to recognise one named in the origin. */
  localAddresses: readonly string[];
}

/**
 * Why a configured origin cannot reach the server at `listening`, or null when it can or when it
 * names something else (a reverse proxy).
 */
export function publicOriginMismatch(configured: string, listening: ListeningAddress): string | null {
  const u = new URL(configured);
  const host = bare(u.hostname).toLowerCase();
  const listenHost = bare(listening.host).toLowerCase();
  const wildcard = isWildcardHost(listenHost);
  const where = `perch listens on ${urlHost(listenHost || '0.0.0.0')}:${listening.port}`;
  let direct: boolean;
  if (isLoopbackHost(host)) {
    if (!wildcard && !isLoopbackHost(listenHost)) return `${host} is this machine's loopback, but ${where} only`;
    direct = true;
  } else if (isIP(host) !== 0) {
    direct = host === listenHost || (wildcard && listening.localAddresses.some((a) => bare(a).toLowerCase() === host));
  } else {
    direct = false;
  }
  if (!direct) return null;
  if (effectivePort(u) !== listening.port) return `it names port ${effectivePort(u)}, but ${where}`;
  if (u.protocol === 'https:') return `it names https, but ${where} with plain HTTP`;
  return null;
}
