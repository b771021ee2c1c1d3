import t from 'tap';
import { hashPassword, passwordProblem, verifyPassword } from '../../src/core/password';

t.test('scrypt hashes: salted, parameters stored, verified', async (t) => {
  const a = await hashPassword('correct horse');
  const b = await hashPassword('correct horse');
  t.match(a, /^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
  t.not(a, b, 'a salt of its own per hash');
  t.equal(await verifyPassword('correct horse', a), true);
  t.equal(await verifyPassword('correct horse', b), true);
  t.equal(await verifyPassword('Correct horse', a), false);
  t.equal(await verifyPassword('', a), false);
  t.notOk(a.includes('correct'), 'the password is not in the hash');
});

t.test('hashes of other parameters still verify; malformed ones never match', async (t) => {
  const cheap = 'scrypt$1024$8$1$c2FsdHNhbHRzYWx0c2FsdA$' + (await import('node:crypto')).scryptSync('pw1234', Buffer.from('c2FsdHNhbHRzYWx0c2FsdA', 'base64url'), 32, { N: 1024, r: 8, p: 1 }).toString('base64url');
  t.equal(await verifyPassword('pw1234', cheap), true);
  t.equal(await verifyPassword('pw1235', cheap), false);
  for (const bad of ['', 'plain', 'scrypt$x$8$1$a$b', 'bcrypt$1$1$1$a$b', 'scrypt$1024$8$1$c2FsdA$']) t.equal(await verifyPassword('pw1234', bad), false, bad);
});

t.test('passwordProblem: 4 to 128 characters, counted as code points', async (t) => {
  t.equal(passwordProblem('abcd'), undefined);
  t.equal(passwordProblem('x'.repeat(128)), undefined);
  t.equal(passwordProblem('abc'), 'must be 4 to 128 characters');
  t.equal(passwordProblem('x'.repeat(129)), 'must be 4 to 128 characters');
  t.equal(passwordProblem('😀😀😀😀'), undefined, 'four emoji are four characters');
});
