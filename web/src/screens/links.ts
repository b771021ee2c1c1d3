// The link list and the shorten form.
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { api, withQuery, type LinkSummary, type Page } from '../api';
import { ErrorMessage, MoreItems, ScreenTitle, announce, useFeed } from '../components';
import { formatDateTime, fromLocalInput } from '../format';
import { href } from '../router';

function ShortenForm({ onCreated }: { onCreated: (link: LinkSummary) => void }) {
  const [url, setUrl] = useState('');
  const [expires, setExpires] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<LinkSummary | null>(null);
  const [copied, setCopied] = useState(false);

  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setCopied(false);
    try {
      const body: Record<string, unknown> = { url: url.trim() };
      const expiresAt = fromLocalInput(expires);
      if (expiresAt) body.expires_at = expiresAt;
      const link = await api.post<LinkSummary>('/api/shorten', body);
      setCreated(link);
      setUrl('');
      setExpires('');
      onCreated(link);
      announce(`Short link created: ${link.short_url}`);
    } catch (err) {
      setError(err);
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

  return html`<section class="card" aria-labelledby="shorten-title">
    <h2 id="shorten-title">Shorten a link</h2>
    <form onSubmit=${submit} class="stack">
      <div class="field">
        <label for="shorten-url">Long URL</label>
        <input id="shorten-url" type="url" required placeholder="https://example.com/a/long/path" inputmode="url"
          value=${url} onInput=${(e: Event) => setUrl((e.target as HTMLInputElement).value)} />
      </div>
      <div class="field">
        <label for="shorten-expires">Expires (optional, your time zone)</label>
        <input id="shorten-expires" type="datetime-local" value=${expires}
          onInput=${(e: Event) => setExpires((e.target as HTMLInputElement).value)} />
      </div>
      <${ErrorMessage} error=${error} />
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Shortening…' : 'Shorten'}</button></div>
    </form>
    ${created
      ? html`<div class="created" role="status">
          <p>Short link: <a href=${created.short_url} class="short-url" target="_blank" rel="noopener noreferrer">${created.short_url}</a></p>
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
      ${expired ? html`<span class="badge">expired</span>` : null}
    </p>
    <p class="link-target" title=${link.url}>${link.url}</p>
    <p class="muted small">Created ${formatDateTime(link.created_at)}${link.expires_at ? ` · ${expired ? 'expired' : 'expires'} ${formatDateTime(link.expires_at)}` : ''}</p>
  </li>`;
}

export function Links() {
  const feed = useFeed((cursor) => api.get<Page<LinkSummary>>(withQuery('/api/links', { limit: 20, cursor })), 'links');
  return html`<div class="screen">
    <${ScreenTitle}>Links</${ScreenTitle}>
    <${ShortenForm} onCreated=${(link: LinkSummary) => feed.setItems((items) => [{ status: 'active', ...link }, ...items.filter((l) => l.short_code !== link.short_code)])} />
    <section aria-labelledby="links-title">
      <h2 id="links-title">Your links</h2>
      ${feed.items.length === 0 && feed.done && !feed.error ? html`<p class="muted">No links yet. Shorten one above.</p>` : null}
      <ul class="link-list">
        ${feed.items.map((l) => html`<${LinkRow} key=${l.short_code} link=${l} />`)}
      </ul>
      ${feed.items.length > 0 || !feed.done ? html`<${MoreItems} feed=${feed} label="Load more links" endText="That is all of your links." />` : null}
    </section>
  </div>`;
}
