// Which network addresses a push endpoint may point at. perch sends Web Push requests to URLs its
// users give it; without a check a user could make the server send requests into its own
// network (server-side request forgery): to loopback services, the local network, or a cloud
// provider's metadata address. Pure: names are resolved by the caller.
import { BlockList, isIP } from 'node:net';

/** Addresses that are not on the public internet (IANA special-purpose registries). */
const NOT_PUBLIC = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
] as const) {
  NOT_PUBLIC.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b:1::', 48], // local-use IPv4/IPv6 translation
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments (Teredo, ORCHID, ...)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: wraps an IPv4 address
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  NOT_PUBLIC.addSubnet(net, prefix, 'ipv6');
}

/** The IPv4 address an IPv6 address carries (IPv4-mapped, IPv4-compatible or NAT64), if any. */
function embeddedIpv4(address: string): string | null {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const hi = parseInt(hex[1], 16);
    const lo = parseInt(hex[2], 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return null;
}

/** True when `address` (an IP literal) is on the public internet. Anything else is false. */
export function isPublicAddress(address: string): boolean {
  const unbracketed = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = isIP(unbracketed);
  if (family === 4) return !NOT_PUBLIC.check(unbracketed, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(unbracketed);
    if (v4 !== null) return isIP(v4) === 4 && !NOT_PUBLIC.check(v4, 'ipv4');
    return !NOT_PUBLIC.check(unbracketed, 'ipv6');
  }
  return false;
}

/**
 * Host names that always name this machine or its local network, refused without asking DNS:
 * `localhost` and names under it, and the `.local`, `.internal`, `.lan` and `.home.arpa` names of
 * local networks.
 */
export function isLocalHostName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  return ['.local', '.internal', '.lan', '.home.arpa'].some((suffix) => h.endsWith(suffix)) || !h.includes('.');
}

export type EndpointCheck = { ok: true; url: URL } | { ok: false; message: string };

/**
 * Checks a push endpoint's URL as given (without resolving its name): an absolute `https` URL of
 * at most 2048 characters, without credentials, whose host is a public address or a name that is
 * not obviously local. With `allowInsecure`, `http` and any address are accepted too (for tests
 * and push services on a private network). The addresses a name resolves to are checked again
 * before each request (notifications/push-sender.ts).
 */
export function checkEndpoint(raw: string, allowInsecure: boolean): EndpointCheck {
  if (raw.length > 2048) return { ok: false, message: 'must be at most 2048 characters' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, message: 'must be an absolute URL' };
  }
  if (url.username || url.password) return { ok: false, message: 'must not carry credentials' };
  if (url.protocol !== 'https:' && !(allowInsecure && url.protocol === 'http:')) return { ok: false, message: 'must be an https URL' };
  if (!url.hostname) return { ok: false, message: 'must have a host' };
  if (allowInsecure) return { ok: true, url };
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host) !== 0) {
    if (!isPublicAddress(host)) return { ok: false, message: 'must not point at a private, loopback or reserved address' };
  } else if (isLocalHostName(host)) {
    return { ok: false, message: 'must not point at a local host name' };
  }
  return { ok: true, url };
}
