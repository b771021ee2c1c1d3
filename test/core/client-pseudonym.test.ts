import t from 'tap';
import { clientPseudonym, newPseudonymKey } from '../../src/core/client-pseudonym';

t.test('one key: one pseudonym per address; another key: another', async (t) => {
  const key = newPseudonymKey();
  const a = clientPseudonym(key, '203.0.113.7');
  t.match(a, /^[A-Za-z0-9_-]{22}$/);
  t.equal(clientPseudonym(key, '203.0.113.7'), a, 'stable within a run');
  t.not(clientPseudonym(key, '203.0.113.8'), a, 'addresses differ');
  t.not(clientPseudonym(newPseudonymKey(), '203.0.113.7'), a, 'a new run, a new pseudonym');
  t.equal(a.includes('203'), false);
  t.equal(key.length, 32);
});
