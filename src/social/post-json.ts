// A post's fixed fields as JSON text, written out field by field: the bytes JSON.stringify gives
// for them, since ids are decimal digits and times ISO 8601, neither needing escapes. The 201 of a
// new post and every timeline item start with these fields; a post's are written on the busiest
// paths there are (each post's 201, and each new post a timeline page shows).
import type { Post } from './store';

/** `{"id":…,"text":…,"author_id":…,"media_ids":…,"reply_to":…,"created_at":…`, without the closing brace. */
export function postFieldsJson(post: Post): string {
  return (
    '{"id":"' + post.id + '","text":' + JSON.stringify(post.text) + ',"author_id":"' + post.author_id +
    '","media_ids":' + (post.media_ids.length === 0 ? '[]' : JSON.stringify(post.media_ids)) +
    ',"reply_to":' + (post.reply_to === null ? 'null' : '"' + post.reply_to + '"') + ',"created_at":"' + post.created_at + '"'
  );
}
