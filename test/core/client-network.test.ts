// The unit a per-client limit counts: an IPv4 address, or an IPv6 /64.
import t from 'tap';
import { clientNetwork } from '../../src/core/client-network';

t.test('IPv4 addresses are themselves', async (t) => {
  t.equal(clientNetwork('192.0.2.7'), '192.0.2.7');
  t.equal(clientNetwork('::ffff:192.0.2.7'), '192.0.2.7', 'an IPv4 address written as IPv6 is the IPv4 client');
  t.equal(clientNetwork('::ffff:c000:207'), '192.0.2.7', 'in hex too');
  t.equal(clientNetwork('::FFFF:192.0.2.7'), '192.0.2.7', 'in capitals too');
  t.equal(clientNetwork('0000:0000:0000:0000:0000:ffff:7f00:0001'), '127.0.0.1', 'as uWS writes it for an IPv4 client of a listener on ::');
  t.equal(clientNetwork('0000:0000:0000:0000:0000:FFFF:C000:0207'), '192.0.2.7');
});

t.test('IPv6 addresses count by their /64, however written', async (t) => {
  const net = '2001:db8:1:2::/64';
  for (const a of ['2001:db8:1:2::1', '2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:0db8:0001:0002:0:0:0:9', '2001:DB8:1:2:a:b:c:d', 'fe80::1%eth0'.replace('fe80::', '2001:db8:1:2::')]) {
    t.equal(clientNetwork(a), net, a);
  }
  t.equal(clientNetwork('2001:db8:1:3::1'), '2001:db8:1:3::/64', 'the next /64 is another client');
  t.equal(clientNetwork('::1'), '0:0:0:0::/64');
  t.equal(clientNetwork('2001:db8::'), '2001:db8:0:0::/64');
  t.equal(clientNetwork('64:ff9b::192.0.2.7'), '192.0.2.7', "NAT64's prefix: the IPv4 client inside, not one /64 for them all");
  t.equal(clientNetwork('64:ff9b::c000:208'), '192.0.2.8');
  t.equal(clientNetwork('64:ff9b:1::1'), '64:ff9b:1:0::/64', 'a local NAT64 prefix is an ordinary /64');
});

t.test('what is not an address is left as it is', async (t) => {
  t.equal(clientNetwork(''), '');
  t.equal(clientNetwork('unknown'), 'unknown');
});
