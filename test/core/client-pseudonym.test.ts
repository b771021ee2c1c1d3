import t from 'tap';
import { clientPseudonym, newPseudonymKey } from '../../src/core/client-pseudonym';

t.test('one key: one pseudonym per address; another key: another', async (t) => {
  const key = newPseudonymKey();
  t.equal(key.length, 32);
  const a = clientPseudonym(key, '203.0.113.7');
  t.match(a, /^[A-Za-z0-9_-]{22}$/);
  t.equal(clientPseudonym(Buffer.from(key), '203.0.113.7'), a, 'the same for the same key and address');
  t.not(clientPseudonym(key, '203.0.113.8'), a, 'addresses differ');
  t.not(clientPseudonym(newPseudonymKey(), '203.0.113.7'), a, 'a new key, a new pseudonym');
});
