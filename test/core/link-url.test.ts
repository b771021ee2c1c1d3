import t from 'tap';
import { checkTargetUrl, hostMatches, registrableDomain } from '../../src/core/link-url';

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
    ['http://SHO.RT.:81/abc', /this service/],
    ['https://evil.example/', /blocked/],
    ['https://a.b.evil.example/', /blocked/],
    ['https://bad.test/', /blocked/],
    ['https://x.BAD.TEST/', /blocked/],
  ];
  for (const [url, msg] of cases) {
    const r = checkTargetUrl(url, rules);
    t.equal(r.ok, false, url.slice(0, 40));
    if (!r.ok) t.match(r.message, msg);
  }
  t.equal(checkTargetUrl('https://example.com/' + 'x'.repeat(2028), rules).ok, true, 'exactly 2048');
  t.equal(checkTargetUrl('https://notevil.example/', rules).ok, true);
  t.equal(checkTargetUrl('https://sho.rt.example/', rules).ok, true);
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
