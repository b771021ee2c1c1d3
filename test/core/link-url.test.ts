import t from 'tap';
import { blocklistHost, checkTargetUrl, hostMatches, registrableDomain } from '../../src/core/link-url';

const rules = { publicOrigin: 'https://sho.rt', blocklist: ['evil.example', 'BAD.test.'] };

t.test('accepted URLs keep their exact text when plain ASCII', async (t) => {
  t.same(checkTargetUrl('https://Example.com/a?b=c#d', rules), { ok: true, url: 'https://Example.com/a?b=c#d', host: 'example.com', domain: 'example.com' });
  t.same(checkTargetUrl('http://a.b.example.co.uk:8080/', rules), { ok: true, url: 'http://a.b.example.co.uk:8080/', host: 'a.b.example.co.uk', domain: 'example.co.uk' });
  t.same(checkTargetUrl('https://example.com/ä b', rules), { ok: true, url: 'https://example.com/%C3%A4%20b', host: 'example.com', domain: 'example.com' });
  t.same(checkTargetUrl('http://127.0.0.1/x', rules), { ok: true, url: 'http://127.0.0.1/x', host: '127.0.0.1', domain: '127.0.0.1' });
});

t.test('rejections', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['example.com', /absolute/],
    ['/path', /absolute/],
    ['', /absolute/],
    ['ftp://example.com', /http or https/],
    ['javascript:alert(1)', /http or https/],
    ['file:///etc/passwd', /http or https/],
    ['http://', /absolute/],
    ['https://example.com/' + 'x'.repeat(2029), /2048/],
    ['https://sho.rt/abc', /this service/],
    ['https://evil.example/', /blocked/],
    ['https://a.b.evil.example/', /blocked/],
    ['https://bad.test/', /blocked/],
    ['https://x.BAD.TEST/', /blocked/],
    // A host only a WHATWG parser finds: the text is what is stored and redirected to.
    ['http:///x', /must have a host/],
    ['https:example.com/p', /must have a host/],
    ['https:/example.com/p', /must have a host/],
    ['http:\\\\example.com\\path', /must have a host/],
    ['http://example.com\\path', /backslash/],
    ['https://\\example.com/', /backslash/],
  ];
  for (const [url, msg] of cases) {
    const r = checkTargetUrl(url, rules);
    t.equal(r.ok, false, url.slice(0, 40));
    if (!r.ok) t.match(r.message, msg);
  }
  t.equal(checkTargetUrl('https://example.com/' + 'x'.repeat(2028), rules).ok, true, 'exactly 2048');
  const accented = 'https://example.com/' + 'é'.repeat(400);
  const encoded = checkTargetUrl(accented, rules);
  t.same(
    encoded,
    {
      ok: false,
      message: 'must be at most 2048 characters once percent-encoded, as it is stored (spaces and non-ASCII characters count as their %XX escapes): this one is 2420',
    },
    '420 characters as sent, 2,420 stored: the message says which length counts',
  );
  t.equal(checkTargetUrl('https://example.com/' + 'é'.repeat(338), rules).ok, true, '20 + 338 × 6 = 2048 once encoded');
  t.equal(checkTargetUrl('https://notevil.example/', rules).ok, true);
  t.equal(checkTargetUrl('https://sho.rt.example/', rules).ok, true);
  t.equal(checkTargetUrl('HTTPS://example.com', rules).ok, true, 'the scheme in capitals');
  t.equal(checkTargetUrl('https://example.com?q=1', rules).ok, true, 'a query right after the host');
  t.equal(checkTargetUrl('https://example.com/a\\b', rules).ok, true, 'a backslash in the path');
});

t.test('registrableDomain', async (t) => {
  t.equal(registrableDomain('example.com'), 'example.com');
  t.equal(registrableDomain('a.b.c.example.com'), 'example.com');
  t.equal(registrableDomain('WWW.Example.COM.'), 'example.com');
  t.equal(registrableDomain('login.bank.co.uk'), 'bank.co.uk');
  t.equal(registrableDomain('bank.co.uk'), 'bank.co.uk');
  t.equal(registrableDomain('user.github.io'), 'user.github.io');
  t.equal(registrableDomain('localhost'), 'localhost');
  t.equal(registrableDomain('10.0.0.1'), '10.0.0.1');
  t.equal(registrableDomain('[::1]'), '[::1]');
});

t.test('hostMatches: the name and its subdomains only', async (t) => {
  t.ok(hostMatches('evil.example', 'evil.example'));
  t.ok(hostMatches('a.evil.example', 'Evil.Example'));
  t.notOk(hostMatches('notevil.example', 'evil.example'));
  t.notOk(hostMatches('evil.example.com', 'evil.example'));
  t.notOk(hostMatches('anything', ' '));
});

t.test('blocklist entries written as a wildcard, a leading dot, a URL or an IDN name', async (t) => {
  for (const entry of ['*.evil.example', '.evil.example', 'https://evil.example/some/path', 'HTTP://Evil.Example:8080', 'evil.example.']) {
    t.ok(hostMatches('evil.example', entry), `${entry} blocks the name`);
    t.ok(hostMatches('a.evil.example', entry), `${entry} blocks a subdomain`);
    t.notOk(hostMatches('notevil.example', entry), `${entry} does not block another name`);
  }
  // URL hosts are in ASCII (punycode): an entry in Unicode must name the same host.
  const host = new URL('https://bücher.example/').hostname;
  t.equal(host, 'xn--bcher-kva.example');
  t.ok(hostMatches(host, 'bücher.example'));
  t.ok(hostMatches(host, 'xn--bcher-kva.example'));
  t.notOk(hostMatches('anything', 'https://'), 'an entry that names no host blocks nothing');
});

t.test('blocklistHost: the host an entry names, as a URL host is written; "" for anything else', async (t) => {
  const hosts: Array<[string, string]> = [
    ['evil.example', 'evil.example'], [' Evil.Example. ', 'evil.example'], ['*.evil.example', 'evil.example'], ['.evil.example', 'evil.example'],
    ['evil.example/', 'evil.example'], ['https://user@evil.example:8443/p?q#f', 'evil.example'], ['bücher.example', 'xn--bcher-kva.example'],
    ['2130706433', '127.0.0.1'], ['::1', '[::1]'], ['[2001:DB8::1]', '[2001:db8::1]'], ['_dmarc.evil.example', '_dmarc.evil.example'],
  ];
  for (const [entry, host] of hosts) t.equal(blocklistHost(entry), host, JSON.stringify(entry));
  for (const entry of ['', ' ', '*', '*.', '.', 'https://', 'http:///', 'evil.example/path', 'evil.example:8080', 'evil.example?q', 'evil.example#f', 'user@evil.example', 'evil example', 'x..y', '*evil.example', 'http:evil']) {
    t.equal(blocklistHost(entry), '', JSON.stringify(entry));
  }
  t.ok(hostMatches('127.0.0.1', '2130706433'), "an address in another notation blocks the URL parser's form of it");
  t.ok(hostMatches('[::1]', '::1'), 'an IPv6 address without brackets blocks the bracketed host');
});

t.test('URLs with credentials are refused: they can make one host look like another', async (t) => {
  const refused = { ok: false, message: 'must not contain credentials (user:password@ before the host)' };
  for (const url of [
    'https://www.google.com@evil.example/',
    'https://user:pass@example.com/',
    'https://user@example.com/',
    'https://:pass@example.com/',
    'https://@example.com/',
    'http://a%40b@example.com/',
    'https://example.com\\@evil.example/',
    'HTTPS:\\\\user@example.com/',
  ]) {
    t.same(checkTargetUrl(url, rules), refused, url);
  }
  // An @ after the host is part of the path, query or fragment, not credentials.
  t.same(checkTargetUrl('https://example.com/@alice', rules), { ok: true, url: 'https://example.com/@alice', host: 'example.com', domain: 'example.com' });
  t.same(checkTargetUrl('https://example.com?to=a@b.example', rules), { ok: true, url: 'https://example.com?to=a@b.example', host: 'example.com', domain: 'example.com' });
  t.same(checkTargetUrl('https://example.com#a@b', rules), { ok: true, url: 'https://example.com#a@b', host: 'example.com', domain: 'example.com' });
});

t.test('the own-origin guard: same host and port, loopback aliases as one host, default ports normalised', async (t) => {
  const own = { ok: false, message: 'must not point at this service' };
  const local = { publicOrigin: 'http://localhost:8080', blocklist: [] };
  for (const url of [
    'http://localhost:8080/x',
    'http://LOCALHOST.:8080/x',
    'http://127.0.0.1:8080/x',
    'http://127.1.2.3:8080/x',
    'http://2130706433:8080/x',
    'http://0x7f.1:8080/x',
    'http://[::1]:8080/x',
    'http://[0:0:0:0:0:0:0:1]:8080/x',
    'http://[::ffff:127.0.0.1]:8080/x',
    'http://app.localhost:8080/x',
    'http://0.0.0.0:8080/x',
    'https://127.0.0.1:8080/x',
  ]) {
    t.same(checkTargetUrl(url, local), own, url);
  }
  // Another port on the loopback interface is another service.
  t.same(checkTargetUrl('http://localhost:3000/x', local), { ok: true, url: 'http://localhost:3000/x', host: 'localhost', domain: 'localhost' });
  t.same(checkTargetUrl('http://127.0.0.1/x', local), { ok: true, url: 'http://127.0.0.1/x', host: '127.0.0.1', domain: '127.0.0.1' });
  t.equal(checkTargetUrl('http://128.0.0.1:8080/x', local).ok, true, '128.0.0.1 is not loopback');
  t.equal(checkTargetUrl('http://localhost.example:8080/x', local).ok, true, 'a name under another domain is not loopback');

  // Default ports: http://host is port 80, https://host port 443, written or not.
  const web = { publicOrigin: 'https://sho.rt', blocklist: [] };
  for (const url of ['https://sho.rt/x', 'https://sho.rt:443/x', 'https://SHO.RT./x', 'http://sho.rt:443/x']) {
    t.same(checkTargetUrl(url, web), own, url);
  }
  // The other default port of the same host: a proxy that sends http to https leads back here.
  t.same(checkTargetUrl('http://sho.rt/x', web), own, 'http on port 80 of the public host');
  t.same(checkTargetUrl('http://sho.rt:80/x', web), own, 'port 80 written out');
  t.same(checkTargetUrl('http://SHO.RT.:81/abc', web), { ok: true, url: 'http://SHO.RT.:81/abc', host: 'sho.rt', domain: 'sho.rt' }, 'another port is another service');
  t.equal(checkTargetUrl('https://sho.rt:8443/x', web).ok, true);

  const onPort = { publicOrigin: 'https://sho.rt:8443', blocklist: [] };
  t.same(checkTargetUrl('https://sho.rt:8443/x', onPort), own);
  t.same(checkTargetUrl('http://sho.rt:8443/x', onPort), own, 'one port speaks one protocol: the scheme does not matter');
  t.equal(checkTargetUrl('https://sho.rt/x', onPort).ok, true, 'the default port of a host served elsewhere');
  t.equal(checkTargetUrl('http://sho.rt/x', onPort).ok, true);

  // A public origin on a loopback address guards every alias of it, and nothing else.
  const v6 = { publicOrigin: 'http://[::1]:9000', blocklist: [] };
  t.same(checkTargetUrl('http://localhost:9000/', v6), own);
  t.same(checkTargetUrl('http://127.0.0.1:9000/', v6), own);
  t.equal(checkTargetUrl('http://example.com:9000/', v6).ok, true);
});
