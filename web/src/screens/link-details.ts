// A link's details: its analytics (30-day chart, referrers, and browsers and OS where the server
// counts them), editing, and deleting.
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api, type LinkDetails as Details, type NameCount } from '../api';
import { ConfirmDialog, ErrorMessage, Loading, ScreenTitle, announce } from '../components';
import { formatDateTime, fromLocalInput, toLocalInput } from '../format';
import { href, navigate } from '../router';
import { ClicksChart } from './chart';

function CountTable({ caption, name, rows }: { caption: string; name: string; rows: NameCount[] }) {
  if (rows.length === 0) return html`<p class="muted">No ${caption.toLowerCase()} yet.</p>`;
  return html`<table class="counts">
    <caption class="visually-hidden">${caption}</caption>
    <thead><tr><th scope="col">${name}</th><th scope="col">Clicks</th></tr></thead>
    <tbody>${rows.map((r) => html`<tr><td>${r.name}</td><td>${r.count}</td></tr>`)}</tbody>
  </table>`;
}

function EditForm({ link, onSaved }: { link: Details; onSaved: (d: Details) => void }) {
  const [url, setUrl] = useState(link.url);
  const [expires, setExpires] = useState(toLocalInput(link.expires_at));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body: Record<string, unknown> = {};
      if (url.trim() !== link.url) body.url = url.trim();
      const expiresAt = fromLocalInput(expires);
      if (expiresAt !== null || link.expires_at !== null) {
        // Same minute as before: leave the exact stored instant alone.
        if (toLocalInput(expiresAt) !== toLocalInput(link.expires_at)) body.expires_at = expiresAt;
      }
      if (Object.keys(body).length === 0) {
        announce('Nothing to save: the link is unchanged.');
        return;
      }
      const saved = await api.patch<Details>(`/api/links/${encodeURIComponent(link.short_code)}`, body);
      onSaved(saved);
      announce('Link saved.');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return html`<form onSubmit=${submit} class="stack" aria-labelledby="edit-title">
    <h2 id="edit-title">Edit</h2>
    <div class="field">
      <label for="edit-url">Target URL</label>
      <input id="edit-url" type="url" required value=${url} onInput=${(e: Event) => setUrl((e.target as HTMLInputElement).value)} />
    </div>
    <div class="field">
      <label for="edit-expires">Expires (empty: never; your time zone)</label>
      <input id="edit-expires" type="datetime-local" value=${expires} onInput=${(e: Event) => setExpires((e.target as HTMLInputElement).value)} />
    </div>
    <${ErrorMessage} error=${error} />
    <div class="actions">
      <button type="submit" disabled=${busy}>${busy ? 'Saving…' : 'Save changes'}</button>
      ${expires ? html`<button type="button" class="secondary" onClick=${() => setExpires('')}>Remove expiry</button>` : null}
    </div>
  </form>`;
}

export function LinkDetails({ code }: { code: string }) {
  const [link, setLink] = useState<Details | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [refreshing, setRefreshing] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [deleteError, setDeleteError] = useState<unknown>(null);

  async function load(announceDone = false) {
    setRefreshing(true);
    setError(null);
    try {
      const d = await api.get<Details>(`/api/links/${encodeURIComponent(code)}`);
      setLink(d);
      if (announceDone) announce(`Analytics refreshed: ${d.clicks.total} clicks in all.`);
    } catch (err) {
      setError(err);
    } finally {
      setRefreshing(false);
    }
  }

  useEffect(() => {
    setLink(null);
    load();
  }, [code]);

  async function remove() {
    setConfirming(false);
    setDeleteError(null);
    try {
      await api.del(`/api/links/${encodeURIComponent(code)}`);
      announce(`Link ${code} deleted.`);
      navigate('/links');
    } catch (err) {
      setDeleteError(err);
    }
  }

  if (!link) {
    return html`<div class="screen">
      <${ScreenTitle}>Link ${code}</${ScreenTitle}>
      ${error ? html`<${ErrorMessage} error=${error} />` : html`<${Loading} />`}
      <p><a href=${href('/links')}>Back to your links</a></p>
    </div>`;
  }

  const c = link.clicks;
  return html`<div class="screen">
    <p class="crumbs"><a href=${href('/links')}>Links</a> / ${code}</p>
    <${ScreenTitle}>Link ${code}</${ScreenTitle}>
    <section class="card" aria-labelledby="about-title">
      <h2 id="about-title" class="visually-hidden">About this link</h2>
      <dl class="facts">
        <dt>Short URL</dt><dd><a href=${link.short_url} target="_blank" rel="noopener noreferrer" class="short-url">${link.short_url}</a></dd>
        <dt>Target</dt><dd class="break">${link.url}</dd>
        <dt>Status</dt><dd>${link.status}</dd>
        <dt>Created</dt><dd>${formatDateTime(link.created_at)}</dd>
        <dt>Updated</dt><dd>${formatDateTime(link.updated_at)}</dd>
        <dt>Expires</dt><dd>${link.expires_at ? formatDateTime(link.expires_at) : 'never'}</dd>
      </dl>
    </section>
    <section class="card" aria-labelledby="clicks-title">
      <div class="row">
        <h2 id="clicks-title">Clicks</h2>
        <button type="button" class="secondary" onClick=${() => load(true)} disabled=${refreshing}>${refreshing ? 'Refreshing…' : 'Refresh'}</button>
      </div>
      <${ErrorMessage} error=${error} />
      <ul class="stats">
        <li><strong class="stat-total">${c.total}</strong> in all</li>
        <li><strong>${c.last_24h}</strong> in the last 24 hours</li>
        <li><strong>${c.bots}</strong> by bots (not counted above)</li>
      </ul>
      <${ClicksChart} daily=${c.daily} />
      <h3>Referrers</h3>
      <${CountTable} caption="Referrers" name="Referrer" rows=${c.referrers.map((r) => ({ name: r.referrer, count: r.count }))} />
      ${c.browsers ? html`<h3>Browsers</h3><${CountTable} caption="Browsers" name="Browser" rows=${c.browsers} />` : null}
      ${c.os ? html`<h3>Operating systems</h3><${CountTable} caption="Operating systems" name="Operating system" rows=${c.os} />` : null}
    </section>
    <section class="card"><${EditForm} key=${link.updated_at} link=${link} onSaved=${setLink} /></section>
    <section class="card" aria-labelledby="delete-title">
      <h2 id="delete-title">Delete</h2>
      <p>Deleting stops the short link at once and removes its analytics for good. The code is not reused.</p>
      <${ErrorMessage} error=${deleteError} />
      <button type="button" class="danger" onClick=${() => setConfirming(true)}>Delete link</button>
    </section>
    <${ConfirmDialog} open=${confirming} title=${`Delete ${code}?`}
      text="The short link will stop working and its click statistics will be removed. This cannot be undone."
      confirmLabel="Delete" onConfirm=${remove} onCancel=${() => setConfirming(false)} />
  </div>`;
}
