// The unit a per-client limit counts by. An IPv4 address is one client. An IPv6 host is usually
// given a whole /64 (SLAAC, privacy addresses, a home network's prefix) and can move within it at
// will, so a limit keyed by the full address would give it 2^64 fresh allowances: IPv6 clients
// are counted by their /64. An IPv4 address written as IPv6 (`::ffff:192.0.2.1`) is the IPv4
// client.
import { isIPv4, isIPv6 } from 'node:net';

/** `address` as the client a limit counts: itself for IPv4, `xxxx:xxxx:xxxx:xxxx::/64` for IPv6. */
export function clientNetwork(address: string): string {
  // The common cases first, without parsing: it runs on every redirect. An IPv4 client of a
  // listener on `::` is given by uWS in the full form, `0000:0000:0000:0000:0000:ffff:7f00:0001`.
  if (address.indexOf(':') === -1) return address;
  if (address.length === 39 && address.startsWith(UWS_MAPPED)) {
    return ipv4Of(parseInt(address.slice(30, 34), 16), parseInt(address.slice(35, 39), 16));
  }
  if (address.startsWith('::ffff:') && isIPv4(address.slice(7))) return address.slice(7);
  const plain = address.replace(/%.*$/, '');
  if (!isIPv6(plain)) return address;
  const groups = ipv6Groups(plain);
  if (groups[0] === 0 && groups[1] === 0 && groups[2] === 0 && groups[3] === 0 && groups[4] === 0 && groups[5] === 0xffff) {
    return ipv4Of(groups[6], groups[7]);
  }
  // NAT64's well-known prefix (RFC 6052) carries every IPv4 client of a translator in one /64:
  // the client is the IPv4 address inside.
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups[2] === 0 && groups[3] === 0 && groups[4] === 0 && groups[5] === 0) {
    return ipv4Of(groups[6], groups[7]);
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`;
}

const UWS_MAPPED = '0000:0000:0000:0000:0000:ffff:';

function ipv4Of(high: number, low: number): string {
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
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
