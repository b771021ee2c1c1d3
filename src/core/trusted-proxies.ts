// server.trusted_proxies: which peers' X-Forwarded-For is believed. Entries are single addresses
// (`10.0.0.7`, `::1`) or CIDR ranges (`10.0.0.0/8`, `fd00::/8`), matched with node:net's
// BlockList. The decision is cached per address: a server sees few distinct peers (its proxies),
// and the redirect path asks once per request. It is a ReadonlySet of the configured entries
// whose `has` answers for every address they cover, so that code written for a set of exact
// addresses (http/client-ip.ts) takes ranges unchanged.
import { BlockList, isIPv4, isIPv6 } from 'node:net';

export interface ProxyEntry {
  family: 'ipv4' | 'ipv6';
  address: string;
  /** Prefix length; a single address is a full-length prefix. */
  prefix: number;
}

/** IPv4-mapped IPv6 (`::ffff:10.0.0.1`) is the IPv4 address it carries. */
function unmapped(address: string): string {
  const lower = address.toLowerCase();
  return lower.startsWith('::ffff:') && isIPv4(lower.slice(7)) ? lower.slice(7) : lower;
}

/** Parses one entry of server.trusted_proxies; null when it is neither an address nor a range. */
export function parseProxyEntry(entry: string): ProxyEntry | null {
  const slash = entry.indexOf('/');
  const address = unmapped((slash === -1 ? entry : entry.slice(0, slash)).trim());
  const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : null;
  if (!family) return null;
  const max = family === 'ipv4' ? 32 : 128;
  if (slash === -1) return { family, address, prefix: max };
  const bits = entry.slice(slash + 1).trim();
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return null;
  return { family, address, prefix: Number(bits) };
}

/** Decisions kept per address before the cache starts over (X-Forwarded-For hops are asked too). */
const CACHE_MAX = 10_000;

export class TrustedProxies implements ReadonlySet<string> {
  private readonly entries_: ReadonlySet<string>;
  private readonly list = new BlockList();
  private readonly decisions = new Map<string, boolean>();

  /** Throws on an entry parseProxyEntry refuses (the configuration is checked before this). */
  constructor(entries: readonly string[]) {
    for (const e of entries) {
      const p = parseProxyEntry(e);
      if (!p) throw new Error(`not an IP address or CIDR range: ${e}`);
      this.list.addSubnet(p.address, p.prefix, p.family);
    }
    this.entries_ = new Set(entries);
  }

  /** How many entries were configured: 0 means X-Forwarded-For is never read. */
  get size(): number {
    return this.entries_.size;
  }

  // The configured entries, as a set of them would show them.
  forEach(fn: (value: string, key: string, set: ReadonlySet<string>) => void, thisArg?: unknown): void {
    this.entries_.forEach((v) => fn.call(thisArg, v, v, this));
  }
  entries(): SetIterator<[string, string]> {
    return this.entries_.entries() as SetIterator<[string, string]>;
  }
  keys(): SetIterator<string> {
    return this.entries_.keys() as SetIterator<string>;
  }
  values(): SetIterator<string> {
    return this.entries_.values() as SetIterator<string>;
  }
  [Symbol.iterator](): SetIterator<string> {
    return this.values();
  }

  /** Whether `address` (as the socket or a proxy wrote it) is a trusted proxy. */
  has(address: string): boolean {
    let d = this.decisions.get(address);
    if (d === undefined) {
      d = this.check(address);
      if (this.decisions.size >= CACHE_MAX) this.decisions.clear();
      this.decisions.set(address, d);
    }
    return d;
  }

  private check(address: string): boolean {
    if (this.size === 0) return false;
    const a = unmapped(address.trim());
    if (isIPv4(a)) return this.list.check(a, 'ipv4');
    if (isIPv6(a)) return this.list.check(a, 'ipv6');
    return false;
  }
}
