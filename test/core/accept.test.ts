// Whether a client asks for JSON rather than a page (core/accept.ts): the type in any case, its
// quality, text/html's quality beside it, and wildcards that do not count.
import t from 'tap';
import { wantsJson } from '../../src/core/accept';
import { quality } from '../../src/core/quality';

t.test('application/json named with a quality above 0 asks for JSON, in any case', async (t) => {
  for (const accept of ['application/json', 'APPLICATION/JSON', 'Application/Json; charset=utf-8', ' application/json ', 'text/plain, application/json;q=0.1', 'application/json, text/html', 'text/html;q=0.5, application/json;q=0.5']) {
    t.equal(wantsJson(accept), true, accept);
  }
});

t.test('a page for everything else', async (t) => {
  for (const accept of [
    '',
    'text/html',
    '*/*',
    'application/*',
    'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    'application/json;q=0',
    'text/html, application/json;q=0',
    'text/html, application/json;q=0.9',
    'application/json;q=bogus',
    'application/jsonp',
    'application/json-seq',
  ]) {
    t.equal(wantsJson(accept), false, JSON.stringify(accept));
  }
});

t.test('quality: 1 when absent, the value when well formed, 0 otherwise', async (t) => {
  t.equal(quality(''), 1);
  t.equal(quality(' charset=utf-8'), 1);
  t.equal(quality('q=0.5'), 0.5);
  t.equal(quality(' Q = 0.25 '), 0.25);
  t.equal(quality('q=1.000'), 1);
  t.equal(quality('q=1.5'), 0);
  t.equal(quality('q=0.1234'), 0);
  t.equal(quality('q=-1'), 0);
});
