import t from 'tap';
import { TrustedProxies, parseProxyEntry } from '../../src/core/trusted-proxies';
import { clientIp } from '../../src/http/client-ip';

t.test('entries: addresses and CIDR ranges of either family, nothing else', async (t) => {
  t.same(parseProxyEntry('10.0.0.7'), { family: 'ipv4', address: '10.0.0.7', prefix: 32 });
  t.same(parseProxyEntry('10.0.0.0/8'), { family: 'ipv4', address: '10.0.0.0', prefix: 8 });
  t.same(parseProxyEntry('::1'), { family: 'ipv6', address: '::1', prefix: 128 });
  t.same(parseProxyEntry('FD00::/8'), { family: 'ipv6', address: 'fd00::', prefix: 8 });
  t.same(parseProxyEntry('::ffff:192.168.1.1'), { family: 'ipv4', address: '192.168.1.1', prefix: 32 }, 'IPv4-mapped is IPv4');
  t.same(parseProxyEntry('0.0.0.0/0'), { family: 'ipv4', address: '0.0.0.0', prefix: 0 });
  for (const bad of ['10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0.0/8x', 'proxy.example', '10.0.0', '', '/8', '10.0.0.0/-1']) {
    t.equal(parseProxyEntry(bad), null, JSON.stringify(bad));
  }
});

t.test('ranges match every address in them and no other', async (t) => {
  const p = new TrustedProxies(['10.0.0.0/8', '192.168.1.7', 'fd00::/8', '::1']);
  t.equal(p.size, 4);
  const cases: Array<[string, boolean]> = [
    ['10.0.0.1', true],
    ['10.255.255.255', true],
    ['11.0.0.1', false],
    ['9.255.255.255', false],
    ['192.168.1.7', true],
    ['192.168.1.8', false],
    ['fd12:3456::1', true],
    ['fe80::1', false],
    ['::1', true],
    ['::2', false],
    ['::ffff:10.1.2.3', true],
    ['::FFFF:10.1.2.3', true],
    ['not an address', false],
    ['', false],
  ];
  for (const [address, trusted] of cases) t.equal(p.has(address), trusted, address);
  // The decision is cached: asking again gives the same answer.
  for (const [address, trusted] of cases) t.equal(p.has(address), trusted, `${address} again`);
  t.same([...p], ['10.0.0.0/8', '192.168.1.7', 'fd00::/8', '::1'], 'as a set, it holds the configured entries');
  t.equal(p.has('10.0.0.0/8'), false, '...while has() asks about addresses');
  t.throws(() => new TrustedProxies(['10.0.0.0/40']), /not an IP address or CIDR range: 10\.0\.0\.0\/40/);
  t.equal(new TrustedProxies([]).has('127.0.0.1'), false, 'no entries: no one is trusted');
});

t.test('client IP behind a proxy in a trusted range', async (t) => {
  const p = new TrustedProxies(['10.0.0.0/8']);
  t.equal(clientIp('10.1.2.3', '203.0.113.5', p), '203.0.113.5', 'peer in the range: the header is believed');
  t.equal(clientIp('10.1.2.3', '198.51.100.1, 203.0.113.5, 10.9.9.9', p), '203.0.113.5', 'right-most hop outside the range');
  t.equal(clientIp('::ffff:10.1.2.3', '203.0.113.5', p), '203.0.113.5', 'an IPv4-mapped peer');
  t.equal(clientIp('172.16.0.1', '203.0.113.5', p), '172.16.0.1', 'peer outside the range: the header is ignored');
  t.equal(clientIp('10.1.2.3', '10.0.0.1, 10.0.0.2', p), '10.1.2.3', 'every hop a proxy: the peer');
});
