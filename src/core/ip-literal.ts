// Reading IP address literals: the forms uWS and proxies write them in, the groups of an IPv6
// address, and the IPv4 address an IPv6 one may wrap. Pure; shared by the client-address reading
// (http/client-ip.ts), the per-client limits (client-network.ts) and the push endpoint check
// (public-address.ts).
import { isIP } from 'node:net';

/** uWS renders IPv4 peers of a dual-stack socket as IPv4-mapped IPv6; show them as IPv4. */
export function normaliseIp(ip: string): string {
  const s = ip.trim().toLowerCase();
  if (s.startsWith('::ffff:') && s.includes('.')) return s.slice(7);
  if (/^0000:0000:0000:0000:0000:ffff:[0-9a-f]{4}:[0-9a-f]{4}$/.test(s)) {
    const p = s.split(':');
    const hi = parseInt(p[6], 16);
    const lo = parseInt(p[7], 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return s;
}

/** An IPv6 address (no brackets) as its eight 16-bit groups, or null when it is not one. */
export function ipv6Groups(address: string): number[] | null {
  if (isIP(address) !== 6) return null;
  let text = address.toLowerCase();
  // A trailing dotted quad is the last two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = text.slice(0, dotted.index) + ((a << 8) | b).toString(16) + ':' + ((c << 8) | d).toString(16);
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, null];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = parse(head);
  if (tail === null) return left;
  const right = parse(tail);
  return [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
}

/** The IPv4 address an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::a.b.c.d) address wraps. */
export function wrappedIpv4(g: number[]): string | null {
  const mapped = g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff;
  const nat64 = g[0] === 0x64 && g[1] === 0xff9b && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0;
  if (!mapped && !nat64) return null;
  return `${g[6] >> 8}.${g[6] & 255}.${g[7] >> 8}.${g[7] & 255}`;
}
