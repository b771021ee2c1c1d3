import t from 'tap';
import { derivePublicOrigin, isHttpOrigin, isLoopbackHost, isWildcardHost, publicOriginMismatch } from '../../src/core/public-origin';

t.test('derived from the listening address', async (t) => {
  t.equal(derivePublicOrigin('127.0.0.1', 8080, 'vm1'), 'http://localhost:8080', "the defaults give the contract's default");
  t.equal(derivePublicOrigin('127.0.0.1', 41234, 'vm1'), 'http://localhost:41234');
  t.equal(derivePublicOrigin('::1', 9000, 'vm1'), 'http://localhost:9000');
  t.equal(derivePublicOrigin('localhost', 80, 'vm1'), 'http://localhost', 'port 80 is implied');
  t.equal(derivePublicOrigin('0.0.0.0', 8080, 'vm1'), 'http://vm1:8080', 'every interface: the machine name');
  t.equal(derivePublicOrigin('::', 8080, 'vm1'), 'http://vm1:8080');
  t.equal(derivePublicOrigin('192.168.1.20', 8080, 'vm1'), 'http://192.168.1.20:8080');
  t.equal(derivePublicOrigin('2001:db8::5', 8080, 'vm1'), 'http://[2001:db8::5]:8080');
});

t.test('loopback and wildcard hosts', async (t) => {
  for (const h of ['localhost', 'LOCALHOST', 'app.localhost', '127.0.0.1', '127.1.2.3', '::1', '[::1]', '::ffff:127.0.0.1']) t.equal(isLoopbackHost(h), true, h);
  for (const h of ['0.0.0.0', '10.0.0.1', 'example.com', '::', '128.0.0.1']) t.equal(isLoopbackHost(h), false, h);
  for (const h of ['0.0.0.0', '::', '[::]', '']) t.equal(isWildcardHost(h), true, JSON.stringify(h));
  for (const h of ['127.0.0.1', '::1', 'example.com']) t.equal(isWildcardHost(h), false, h);
});

t.test('an http(s) origin, nothing more', async (t) => {
  for (const v of ['http://localhost:8080', 'https://short.example', 'https://short.example/', 'http://[::1]:9000']) t.equal(isHttpOrigin(v), true, v);
  for (const v of ['', 'short.example', 'ftp://short.example', 'https://short.example/s', 'https://u:p@short.example', 'https://short.example?x=1', 'https://short.example#top']) {
    t.equal(isHttpOrigin(v), false, v);
  }
});

t.test('a configured origin is checked against the listening address', async (t) => {
  const local = { host: '127.0.0.1', port: 9000, localAddresses: ['127.0.0.1', '::1', '192.168.1.20'] };
  t.equal(publicOriginMismatch('http://localhost:9000', local), null, 'the listening port');
  t.equal(publicOriginMismatch('http://127.0.0.1:9000/', local), null);
  t.equal(publicOriginMismatch('http://localhost:8080', local), 'it names port 8080, but perch listens on 127.0.0.1:9000');
  t.equal(publicOriginMismatch('http://[::1]', local), 'it names port 80, but perch listens on 127.0.0.1:9000');
  t.equal(publicOriginMismatch('https://localhost:9000', local), 'it names https, but perch listens on 127.0.0.1:9000 with plain HTTP');
  t.equal(publicOriginMismatch('https://short.example', local), null, 'a name: a reverse proxy in front, not second-guessed');
  t.equal(publicOriginMismatch('http://203.0.113.9', local), null, 'another address: a proxy');
  t.equal(publicOriginMismatch('http://192.168.1.20:9000', local), null, 'an address of this machine perch does not listen on: not direct');

  const lan = { host: '192.168.1.20', port: 8080, localAddresses: ['127.0.0.1', '192.168.1.20'] };
  t.equal(publicOriginMismatch('http://192.168.1.20:8080', lan), null);
  t.equal(publicOriginMismatch('http://192.168.1.20:8081', lan), 'it names port 8081, but perch listens on 192.168.1.20:8080');
  t.equal(publicOriginMismatch('http://localhost:8080', lan), 'localhost is this machine\'s loopback, but perch listens on 192.168.1.20:8080 only');

  const all = { host: '0.0.0.0', port: 8080, localAddresses: ['127.0.0.1', '192.168.1.20', 'fe80::1'] };
  t.equal(publicOriginMismatch('http://192.168.1.20:8080', all), null);
  t.equal(publicOriginMismatch('http://192.168.1.20', all), 'it names port 80, but perch listens on 0.0.0.0:8080');
  t.equal(publicOriginMismatch('http://localhost:8081', all), 'it names port 8081, but perch listens on 0.0.0.0:8080');
  t.equal(publicOriginMismatch('http://[fe80::1]:8081', all), 'it names port 8081, but perch listens on 0.0.0.0:8080');
  t.equal(publicOriginMismatch('http://[fe80::2]:8081', all), null, 'not one of its addresses');
});
