import t from 'tap';
import { created } from '../../src/social/routes';

t.test("a new post's 201 body is the bytes JSON.stringify gives", async (t) => {
  // The key order of the posts the writer answers with (social/writes.ts).
  const post = (text: string, media_ids: string[], reply_to: string | null) => ({
    id: '382893587576131584',
    text,
    author_id: '382893586405924864',
    media_ids,
    reply_to,
    created_at: '2026-11-23T02:11:34.123Z',
  });
  const posts = [
    post('plain', [], null),
    post('quotes " and \\ and \n new line, \u2028, é, 🐦, <tag>', ['m_1', 'm_2'], '382893587576131000'),
    post(' ', ['x'], null),
  ];
  for (const post of posts) {
    const reply = created(post);
    t.equal(reply.status, 201);
    t.equal(reply.contentType, 'application/json');
    t.equal(reply.body, JSON.stringify(post));
  }
});
