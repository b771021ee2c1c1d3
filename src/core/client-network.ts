// The unit a per-client limit counts by. An IPv4 address is one client. An IPv6 host is usually
// given a whole /64 (SLAAC, privacy addresses, a home network's prefix) and can move within it at
// will, so a limit keyed by the full address would give it 2^64 fresh allowances: IPv6 clients
// are counted by their /64. An IPv4 address written as IPv6 (`::ffff:192.0.2.1`) is the IPv4
// client.
import { isIPv4, isIPv6 } from 'node:net';

/** `address` as the client a limit counts: itself for IPv4, `xxxx:xxxx:xxxx:xxxx::/64` for IPv6. */
export function clientNetwork(address: string): string {
  // The common cases first, without parsing: it runs on every redirect.
  if (address.indexOf(':') === -1) return address;
  if (address.startsWith('::ffff:') && isIPv4(address.slice(7))) return address.slice(7);
  const plain = address.replace(/%.*$/, '');
  if (!isIPv6(plain)) return address;
  const groups = ipv6Groups(plain);
  if (groups[0] === 0 && groups[1] === 0 && groups[2] === 0 && groups[3] === 0 && groups[4] === 0 && groups[5] === 0xffff) {
    return `${groups[6] >> 8}.${groups[6] & 0xff}.${groups[7] >> 8}.${groups[7] & 0xff}`;
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a trailing IPv4 as two groups). */
function ipv6Groups(address: string): number[] {
  let text = address;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4 && isIPv4(v4[1])) {
    const [a, b, c, d] = v4[1].split('.').map(Number);
    text = text.slice(0, -v4[1].length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const part = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const front = part(head);
  if (tail === undefined) return front;
  const back = part(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}
