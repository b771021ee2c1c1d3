// The link list, the shorten form (alias, expiry, password) and the export.
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { ApiError, api, fieldError, withQuery, type FormFields, type LinkSummary, type Page } from '../api';
import { ErrorMessage, MoreItems, ScreenTitle, announce, useFeed } from '../components';
import { download } from '../download';
import { formatDateTime, fromLocalInput } from '../format';
import { href } from '../router';

/** An input's label, the input, and what the server said about it (described by, not announced twice). */
export function Field({ id, label, hint, error, children }: { id: string; label: string; hint?: string; error: string | null; children: unknown }) {
  return html`<div class="field">
    <label for=${id}>${label}</label>
    ${hint ? html`<p class="hint muted small" id=${id + '-hint'}>${hint}</p>` : null}
    ${children}
    ${error ? html`<p class="field-error" id=${id + '-error'}>${error}</p>` : null}
  </div>`;
}

/** aria-describedby and aria-invalid of an input of `Field`. */
export function described(id: string, hint: boolean, error: string | null) {
  const ids = [hint ? id + '-hint' : '', error ? id + '-error' : ''].filter(Boolean).join(' ');
  return { 'aria-describedby': ids || undefined, 'aria-invalid': error ? 'true' : undefined };
}

/** The shorten form's fields that say their own errors, by the API's names, as the form labels them. */
const SHORTEN_FIELDS: FormFields = {
  labels: { url: 'Long URL', alias: 'Alias', expires_at: 'Expires', password: 'Password' },
  conflictPath: 'alias',
};

function ShortenForm({ onCreated }: { onCreated: (link: LinkSummary) => void }) {
  const [url, setUrl] = useState('');
  const [alias, setAlias] = useState('');
  const [expires, setExpires] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<LinkSummary | null>(null);
  const [copied, setCopied] = useState(false);

  async function submit(e: Event) {
    e.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(null);
    setCopied(false);
    // The last link made goes: shown beside this request's error, it read as this request's result.
    setCreated(null);
    try {
      const body: Record<string, unknown> = { url: url.trim() };
      const expiresAt = fromLocalInput(expires);
      if (expiresAt) body.expires_at = expiresAt;
      if (alias.trim()) body.alias = alias.trim();
      if (password) body.password = password;
      const link = await api.post<LinkSummary>('/api/shorten', body);
      setCreated(link);
      setUrl('');
      setAlias('');
      setExpires('');
      setPassword('');
      onCreated(link);
      announce(`Short link created: ${link.short_url}${link.password_protected ? ', protected by a password' : ''}`);
    } catch (err) {
      setError(err);
      // A taken alias is the field to change: put the focus there.
      if (err instanceof ApiError && err.status === 409) document.getElementById('shorten-alias')?.focus();
    } finally {
      setBusy(false);
    }
  }

  async function copy() {
    if (!created) return;
    try {
      await navigator.clipboard.writeText(created.short_url);
      setCopied(true);
      announce('Short link copied.');
    } catch {
      announce('Copying is not allowed here; select the link and copy it.');
    }
  }

  // The server checks every field and says what is wrong in its own words (all problems in one
  // answer); the inputs do not repeat its rules, so the two cannot disagree.
  const errs = {
    url: fieldError(error, 'url'),
    alias: fieldError(error, 'alias', SHORTEN_FIELDS.conflictPath),
    expires: fieldError(error, 'expires_at'),
    password: fieldError(error, 'password'),
  };
  const value = (set: (v: string) => void) => (e: Event) => set((e.target as HTMLInputElement).value);
  return html`<section class="card" aria-labelledby="shorten-title">
    <h2 id="shorten-title">Shorten a link</h2>
    <form onSubmit=${submit} class="stack">
      <${Field} id="shorten-url" label="Long URL" error=${errs.url}>
        <input id="shorten-url" type="url" required placeholder="https://example.com/a/long/path" inputmode="url"
          value=${url} onInput=${value(setUrl)} ...${described('shorten-url', false, errs.url)} />
      </${Field}>
      <div class="field-grid">
        <${Field} id="shorten-alias" label="Alias (optional)" hint="Your own code: 3–64 letters, digits, - or _." error=${errs.alias}>
          <input id="shorten-alias" type="text" autocomplete="off" spellcheck="false" autocapitalize="off"
            value=${alias} onInput=${value(setAlias)} ...${described('shorten-alias', true, errs.alias)} />
        </${Field}>
        <${Field} id="shorten-expires" label="Expires (optional)" hint="In your time zone." error=${errs.expires}>
          <input id="shorten-expires" type="datetime-local" value=${expires} onInput=${value(setExpires)}
            ...${described('shorten-expires', true, errs.expires)} />
        </${Field}>
        <${Field} id="shorten-password" label="Password (optional)" hint="4–128 characters; visitors must type it." error=${errs.password}>
          <input id="shorten-password" type="password" autocomplete="new-password"
            value=${password} onInput=${value(setPassword)} ...${described('shorten-password', true, errs.password)} />
        </${Field}>
      </div>
      <${ErrorMessage} error=${error} fields=${SHORTEN_FIELDS} />
      <div class="actions"><button type="submit" aria-disabled=${busy ? 'true' : null}>${busy ? 'Shortening…' : 'Shorten'}</button></div>
    </form>
    ${created
      ? html`<div class="created" role="status">
          <p>Short link: <a href=${created.short_url} class="short-url" target="_blank" rel="noopener noreferrer">${created.short_url}</a>
            ${created.password_protected ? html` <span class="badge">password</span>` : null}</p>
          <p class="actions">
            <button type="button" class="secondary" onClick=${copy}>${copied ? 'Copied' : 'Copy'}</button>
            <a href=${href('/links/' + created.short_code)}>Details of ${created.short_code}</a>
          </p>
        </div>`
      : null}
  </section>`;
}

export function LinkRow({ link }: { link: LinkSummary }) {
  const expired = link.status === 'expired';
  return html`<li class="link-row" data-code=${link.short_code}>
    <p class="link-main">
      <a href=${href('/links/' + link.short_code)} class="code">${link.short_code}</a>
      ${link.password_protected ? html`<span class="badge" title="Visitors must type a password">password</span>` : null}
      ${expired ? html`<span class="badge">expired</span>` : null}
    </p>
    <p class="link-target" title=${link.url}>${link.url}</p>
    <p class="muted small">Created ${formatDateTime(link.created_at)}${link.expires_at ? ` · ${expired ? 'expired' : 'expires'} ${formatDateTime(link.expires_at)}` : ''}</p>
  </li>`;
}

/** Downloads of all of one's links (GET /api/links/export), read with the key and saved. */
function ExportButtons() {
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  async function run(format: 'csv' | 'json') {
    if (busy) return;
    setBusy(format);
    setError(null);
    try {
      const name = await download(withQuery('/api/links/export', { format }), `perch-links.${format}`);
      announce(`Saved ${name}.`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(null);
    }
  }
  return html`<div class="export">
    <div class="actions">
      <button type="button" class="secondary small" onClick=${() => run('csv')} aria-disabled=${busy ? 'true' : null}>${busy === 'csv' ? 'Exporting…' : 'Export CSV'}</button>
      <button type="button" class="secondary small" onClick=${() => run('json')} aria-disabled=${busy ? 'true' : null}>${busy === 'json' ? 'Exporting…' : 'Export JSON'}</button>
    </div>
    <${ErrorMessage} error=${error} />
  </div>`;
}

export function Links() {
  const feed = useFeed((cursor) => api.get<Page<LinkSummary>>(withQuery('/api/links', { limit: 20, cursor })), 'links');
  return html`<div class="screen">
    <${ScreenTitle}>Links</${ScreenTitle}>
    <${ShortenForm} onCreated=${(link: LinkSummary) => feed.setItems((items) => [{ status: 'active', ...link }, ...items.filter((l) => l.short_code !== link.short_code)])} />
    <section aria-labelledby="links-title">
      <div class="row">
        <h2 id="links-title">Your links</h2>
        ${feed.items.length > 0 ? html`<${ExportButtons} />` : null}
      </div>
      ${feed.items.length === 0 && feed.done && !feed.error ? html`<p class="muted">No links yet. Shorten one above.</p>` : null}
      <ul class="link-list">
        ${feed.items.map((l) => html`<${LinkRow} key=${l.short_code} link=${l} />`)}
      </ul>
      ${feed.items.length > 0 || !feed.done ? html`<${MoreItems} feed=${feed} label="Load more links" endText="That is all of your links." />` : null}
    </section>
  </div>`;
}
