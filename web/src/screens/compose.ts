// Writing a post: text with the server's own 280-character rule, and up to four images uploaded
// first (POST /api/media, the raw bytes) and then attached by id.
import { html } from 'htm/preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { MAX_POST_CODE_POINTS, codePointLength, showsNothing } from '../../../src/core/post-text';
import { ApiError, Problem, api, describeError, type Post } from '../api';
import { ErrorMessage, announce } from '../components';
import { plural } from '../format';
import { session } from '../session';
import { useStore } from '../store';

const MEDIA_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
const MEDIA_MAX_BYTES = 5 * 1024 * 1024;
const MAX_MEDIA = 4;

interface Attachment {
  file: File;
  preview: string;
  /** The media id once uploaded: a retry after a failed post does not upload again. */
  id?: string;
}

/**
 * Deletes, on the server, the upload of an image taken out of a post never sent (removed after a
 * failed post, or left with the form): it would otherwise hold its user's quota until the server
 * forgets unposted files. Nothing depends on it, so a failure is not shown.
 */
function discardUpload(a: Attachment): void {
  URL.revokeObjectURL(a.preview);
  if (a.id) api.deleteMedia(a.id).catch(() => {});
}

/**
 * The attachments a refused post names as unknown media (`media_ids.<i>`: no such media uploaded
 * by you), when those are all it names.
 */
function unknownMedia(err: unknown): number[] {
  if (!(err instanceof ApiError) || err.status !== 400 || err.details.length === 0) return [];
  const indexes = err.details.map((d) => /^media_ids\.(\d+)$/.exec(d.path));
  return indexes.every((m) => m !== null) ? indexes.map((m) => Number(m![1])) : [];
}

/**
 * Uploads one image; a refusal of the file itself (not an image of its type, too large) names the
 * file, since several may have been attached.
 */
async function uploadNamed(file: File): Promise<{ id: string }> {
  try {
    return await api.upload(file);
  } catch (err) {
    if (err instanceof ApiError && (err.status === 400 || err.status === 413 || err.status === 415)) {
      throw new Problem(`${file.name} could not be attached: ${describeError(err)}`);
    }
    throw err;
  }
}

/** How the server counts: code points after NFC normalisation (src/core/post-text.ts). */
export function postLength(text: string): number {
  return codePointLength(text.normalize('NFC'));
}

/**
 * `replyTo`: the post this one answers (POST /api/posts with `reply_to`); the form is then labelled
 * as a reply.
 */
export function Compose({ onPosted, replyTo }: { onPosted: (post: Post) => void; replyTo?: string }) {
  const me = useStore(session).me;
  const [text, setText] = useState('');
  const [attachments, setAttachments] = useState<Attachment[]>([]);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  // Why Post, pressed, sent nothing (empty or overlong text), until the text changes.
  const [textProblem, setTextProblem] = useState<string | null>(null);
  const fileInput = useRef<HTMLInputElement>(null);

  const length = useMemo(() => postLength(text), [text]);
  const left = MAX_POST_CODE_POINTS - length;
  // The server refuses text that shows nothing (white space, invisible characters): the same rule.
  const blank = showsNothing(text.normalize('NFC'));
  const canPost = !busy && !blank && left >= 0;
  // Marked rather than disabled, here and on Post: a disabled control drops the keyboard's focus
  // (the fourth image picked, a post sent with Enter on its button).
  const cannotPick = !!busy || attachments.length >= MAX_MEDIA;

  // What is attached as the form goes (to another screen): read through a ref, since the clean-up
  // below is made once, with the first render's values.
  const current = useRef(attachments);
  current.current = attachments;
  /** A post on its way: its images may be in it, so it decides what becomes of them (submit). */
  const sending = useRef(false);
  const gone = useRef(false);
  useEffect(
    () => () => {
      gone.current = true;
      if (!sending.current) current.current.forEach(discardUpload);
    },
    [],
  );

  function pickFiles(e: Event) {
    const input = e.target as HTMLInputElement;
    const picked = Array.from(input.files ?? []);
    input.value = '';
    const problems: string[] = [];
    const accepted: Attachment[] = [];
    for (const file of picked) {
      if (!MEDIA_TYPES.includes(file.type)) problems.push(`${file.name} is not a PNG, JPEG, GIF or WebP image`);
      else if (file.size > MEDIA_MAX_BYTES) problems.push(`${file.name} is larger than 5 MiB`);
      else if (attachments.length + accepted.length >= MAX_MEDIA) problems.push(`${file.name} was left out: a post has at most ${MAX_MEDIA} images`);
      else accepted.push({ file, preview: URL.createObjectURL(file) });
    }
    setAttachments([...attachments, ...accepted]);
    setError(problems.length ? new Problem(problems.join('; ') + '.') : null);
    if (accepted.length) announce(`${accepted.length} image${accepted.length === 1 ? '' : 's'} attached.`);
  }

  function removeAttachment(index: number) {
    discardUpload(attachments[index]);
    setAttachments(attachments.filter((_, i) => i !== index));
    announce('Image removed.');
  }

  async function submit(e: Event) {
    e.preventDefault();
    if (busy || !me) return;
    // Post is only marked, not disabled (above): pressed anyway, it says why nothing was sent.
    if (blank) {
      setTextProblem(replyTo ? 'Write your reply first.' : 'Write something first: a post needs text.');
      return;
    }
    if (left < 0) {
      setTextProblem(`Shorten the text by ${plural(-left, 'character')}: a post holds at most ${MAX_POST_CODE_POINTS}.`);
      return;
    }
    setTextProblem(null);
    setError(null);
    sending.current = true;
    let uploaded = [...attachments];
    try {
      let post: Post | undefined;
      for (let attempt = 0; !post; attempt++) {
        // Uploaded for an earlier attempt: the server may have forgotten them since (below).
        const earlier = new Set(uploaded.flatMap((a, i) => (a.id ? [i] : [])));
        for (let i = 0; i < uploaded.length; i++) {
          if (uploaded[i].id) continue;
          setBusy(`Uploading image ${i + 1} of ${uploaded.length}…`);
          const media = await uploadNamed(uploaded[i].file);
          uploaded[i] = { ...uploaded[i], id: media.id };
          setAttachments([...uploaded]);
        }
        setBusy('Posting…');
        const body: Record<string, unknown> = { text };
        if (uploaded.length) body.media_ids = uploaded.map((a) => a.id);
        if (replyTo) body.reply_to = replyTo;
        try {
          post = await api.post<Post>('/api/posts', body);
        } catch (err) {
          // A retry long after its images were uploaded: the server forgets uploads never posted
          // after a day (or their uploader deleted them elsewhere), and names them. Uploaded
          // again, once.
          const forgotten = attempt === 0 ? unknownMedia(err).filter((i) => earlier.has(i)) : [];
          if (forgotten.length === 0) throw err;
          uploaded = uploaded.map((a, i) => (forgotten.includes(i) ? { ...a, id: undefined } : a));
        }
      }
      uploaded.forEach((a) => URL.revokeObjectURL(a.preview));
      setAttachments([]);
      // Posted: none is left to discard, even if the form goes before it renders again.
      current.current = [];
      setText('');
      // Said first, so that a screen that knows more (where a reply went) can say it instead.
      announce(replyTo ? 'Reply posted.' : 'Posted.');
      onPosted({ ...post, like_count: 0, reply_count: 0, author: { id: me.id, handle: me.handle } });
    } catch (err) {
      // The form went while this post was on its way, and the post failed: nothing keeps its images.
      if (gone.current) uploaded.forEach(discardUpload);
      setError(err);
    } finally {
      sending.current = false;
      setBusy(null);
    }
  }

  const counterText = left >= 0 ? `${plural(left, 'character')} left` : `${plural(-left, 'character')} over the limit`;
  return html`<form class="compose card" onSubmit=${submit} aria-labelledby="compose-title">
    <h2 id="compose-title" class=${replyTo ? '' : 'visually-hidden'}>${replyTo ? 'Reply' : 'Write a post'}</h2>
    <label for="compose-text">${replyTo ? 'Your reply' : 'What is on your mind?'}</label>
    <textarea id="compose-text" rows="3" value=${text} aria-describedby="compose-count"
      aria-invalid=${left < 0 ? 'true' : 'false'}
      onInput=${(e: Event) => {
        setText((e.target as HTMLTextAreaElement).value);
        // What Post said about the text no longer holds once the text changes.
        setTextProblem(null);
      }}></textarea>
    <div class="compose-bar">
      <p id="compose-count" class=${'counter' + (left < 0 ? ' over' : left <= 20 ? ' near' : '')}>${counterText}</p>
      <div class="actions">
        <input ref=${fileInput} id="compose-media" class="visually-hidden" type="file" accept=${MEDIA_TYPES.join(',')} multiple
          onChange=${pickFiles} aria-disabled=${cannotPick ? 'true' : null}
          onClick=${(e: Event) => cannotPick && e.preventDefault()} />
        <label for="compose-media" class=${'button secondary' + (cannotPick ? ' disabled' : '')}>Add images</label>
        <button type="submit" aria-disabled=${canPost ? null : 'true'}>${replyTo ? 'Reply' : 'Post'}</button>
      </div>
    </div>
    ${attachments.length
      ? html`<ul class="attachments" aria-label="Attached images">
          ${attachments.map(
            (a, i) => html`<li>
              <img src=${a.preview} alt=${`Attached image ${i + 1}: ${a.file.name}`} />
              <button type="button" class="secondary small" onClick=${() => !busy && removeAttachment(i)} aria-disabled=${busy ? 'true' : null}
                aria-label=${`Remove image ${i + 1}, ${a.file.name}`}>Remove</button>
            </li>`,
          )}
        </ul>`
      : null}
    ${busy ? html`<p class="muted" role="status">${busy}</p>` : null}
    <${ErrorMessage} error=${textProblem ? new Problem(textProblem) : null} id="compose-text-problem" />
    <${ErrorMessage} error=${error} />
  </form>`;
}

