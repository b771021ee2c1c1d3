// The addresses the web client shows as links in a post's text.
import t from 'tap';
import { loadWebModule } from './web-module';

// Declared rather than imported (notification-rules.test.ts says why).
interface PostLinks {
  textParts(text: string): Array<{ text: string; url?: string }>;
}
const { textParts } = loadWebModule<PostLinks>('src/post-links.ts');

const urls = (text: string) => textParts(text).filter((p) => p.url).map((p) => p.url);

t.test('addresses in running text, without the sentence around them', async (t) => {
  t.same(textParts('see https://perch.example/abc1234 now'), [{ text: 'see ' }, { text: 'https://perch.example/abc1234', url: 'https://perch.example/abc1234' }, { text: ' now' }]);
  t.same(urls('At the end: http://a.example/x.'), ['http://a.example/x'], 'a full stop after it');
  t.same(urls('Two: https://a.example/1, https://b.example/2!'), ['https://a.example/1', 'https://b.example/2']);
  t.same(urls('(https://a.example/x)'), ['https://a.example/x'], 'brackets around it');
  t.same(urls('https://en.wikipedia.org/wiki/Perch_(fish)'), ['https://en.wikipedia.org/wiki/Perch_(fish)'], 'its own brackets');
  t.same(urls('(see https://en.wikipedia.org/wiki/Perch_(fish)).'), ['https://en.wikipedia.org/wiki/Perch_(fish)']);
  t.same(urls('HTTPS://A.EXAMPLE/Q?x=1&y=2#top'), ['HTTPS://A.EXAMPLE/Q?x=1&y=2#top'], 'query and fragment; any case');
  t.same(urls('"https://a.example/q"'), ['https://a.example/q'], 'quotes around it');
  t.same(urls('<https://a.example/q>'), ['https://a.example/q']);
});

t.test('what is not an address stays text', async (t) => {
  t.same(textParts('no address here'), [{ text: 'no address here' }]);
  t.same(urls('https:// alone, ftp://a.example, javascript:alert(1), www.example.com'), [], 'only http(s) with something after //');
  t.same(urls('xhttps://a.example'), [], 'inside a word');
  t.same(textParts(''), []);
  t.same(urls('https://a.example/\u202Egpj.exe'), ['https://a.example/'], 'an invisible format character ends it (a right-to-left override)');
  t.same(urls('https://a.example/x\u200By'), ['https://a.example/x'], 'a zero-width space too');
  t.same(urls('https://bank.example@evil.example/login and https://javascript:alert(9)@x.example/'), [], 'credentials before the host: it reads as one site and leads to another');
  t.same(textParts('pay at https://bank.example@evil.example/ now'), [{ text: 'pay at https://bank.example@evil.example/ now' }], 'left as text');
  t.same(urls('mail me: https://a.example/users/@bob?x=a@b#c@d'), ['https://a.example/users/@bob?x=a@b#c@d'], 'an @ after the host is part of the path');
});

t.test('joined, the parts are the text', async (t) => {
  for (const text of ['a https://a.example/x. b', '(https://a.example/(y)) z', 'https://a.example', 'end https://', 'a https://u@b.example c https://d.example']) {
    t.equal(textParts(text).map((p) => p.text).join(''), text, text);
  }
});
