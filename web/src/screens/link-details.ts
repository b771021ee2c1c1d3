// A link's details: its analytics (30-day chart, referrers, browsers, operating systems), the QR
// code, editing (target, expiry, password), and deleting.
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api, fieldError, requestFile, type FormFields, type LinkDetails as Details, type NameCount } from '../api';
import { ConfirmDialog, ErrorMessage, Loading, ScreenTitle, announce } from '../components';
import { download } from '../download';
import { formatDateTime, fromLocalInput, toLocalInput } from '../format';
import { href, navigate } from '../router';
import { ClicksChart } from './chart';
import { Field, described } from './links';

function CountTable({ caption, name, rows }: { caption: string; name: string; rows: NameCount[] }) {
  return html`<div class="count-table">
    <h3>${caption}</h3>
    ${rows.length === 0
      ? html`<p class="muted">No ${caption.toLowerCase()} yet.</p>`
      : html`<table class="counts" data-kind=${caption.toLowerCase()}>
          <caption class="visually-hidden">${caption}, top 10 by clicks</caption>
          <thead><tr><th scope="col">${name}</th><th scope="col">Clicks</th></tr></thead>
          <tbody>${rows.map((r) => html`<tr><td>${r.name}</td><td>${r.count}</td></tr>`)}</tbody>
        </table>`}
  </div>`;
}

/**
 * The QR code of the short URL. GET /api/links/{code}/qr is for the owner only, so an <img> cannot
 * load it by address (it would carry no key): it is read with the key and shown from a blob: URL,
 * which the page's policy allows for images.
 */
function QrCode({ link }: { link: Details }) {
  const [src, setSrc] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [saving, setSaving] = useState(false);
  const code = encodeURIComponent(link.short_code);

  useEffect(() => {
    let url: string | null = null;
    let current = true;
    setSrc(null);
    setError(null);
    requestFile(`/api/links/${code}/qr?format=svg&size=256`, 'image/svg+xml').then(
      ({ blob }) => {
        if (!current) return;
        url = URL.createObjectURL(blob);
        setSrc(url);
      },
      (err) => current && setError(err),
    );
    return () => {
      current = false;
      if (url) URL.revokeObjectURL(url);
    };
  }, [link.short_code]);

  async function save(format: 'png' | 'svg') {
    if (saving) return;
    setSaving(true);
    setError(null);
    try {
      const name = await download(`/api/links/${code}/qr?format=${format}&size=1024`, `qr-${link.short_code}.${format}`);
      announce(`Saved ${name}.`);
    } catch (err) {
      setError(err);
    } finally {
      setSaving(false);
    }
  }

  return html`<section class="card qr" aria-labelledby="qr-title">
    <h2 id="qr-title">QR code</h2>
    <div class="qr-body">
      ${src
        ? html`<img class="qr-image" src=${src} width="256" height="256" alt=${`QR code of ${link.short_url}`} />`
        : error ? null : html`<${Loading} label="Loading the QR code…" />`}
      <div class="stack">
        <p class="muted small">Scanning it opens ${link.short_url}${link.password_protected ? ', which asks for the password' : ''}.</p>
        <div class="actions">
          <button type="button" class="secondary small" onClick=${() => save('png')} aria-disabled=${saving ? 'true' : null}>Download PNG</button>
          <button type="button" class="secondary small" onClick=${() => save('svg')} aria-disabled=${saving ? 'true' : null}>Download SVG</button>
        </div>
      </div>
    </div>
    <${ErrorMessage} error=${error} />
  </section>`;
}

function EditForm({ link, onSaved }: { link: Details; onSaved: (d: Details) => void }) {
  const [url, setUrl] = useState(link.url);
  const [expires, setExpires] = useState(toLocalInput(link.expires_at));
  const [password, setPassword] = useState('');
  const [removePassword, setRemovePassword] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function submit(e: Event) {
    e.preventDefault();
    if (busy) return;
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
      if (removePassword) body.password = null;
      else if (password) body.password = password;
      if (Object.keys(body).length === 0) {
        announce('Nothing to save: the link is unchanged.');
        return;
      }
      const saved = await api.patch<Details>(`/api/links/${encodeURIComponent(link.short_code)}`, body);
      onSaved(saved);
      announce(
        removePassword ? 'Link saved; it has no password now.' : password ? 'Link saved with the new password.' : 'Link saved.',
      );
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  // Empties the field only, as typing would: Save changes sends it. The button goes with the
  // value, so the focus moves to the field it cleared rather than falling to the page.
  function clearExpiry() {
    setExpires('');
    document.getElementById('edit-expires')?.focus();
    announce(link.expires_at ? 'Expiry cleared; Save changes to remove it.' : 'Expiry cleared.');
  }
  const errs = { url: fieldError(error, 'url'), expires: fieldError(error, 'expires_at'), password: fieldError(error, 'password') };
  const fields: FormFields = { labels: { url: 'Target URL', expires_at: 'Expires', password: link.password_protected ? 'New password' : 'Password' } };
  return html`<form onSubmit=${submit} class="stack" aria-labelledby="edit-title">
    <h2 id="edit-title">Edit</h2>
    <${Field} id="edit-url" label="Target URL" error=${errs.url}>
      <input id="edit-url" type="url" required value=${url} onInput=${(e: Event) => setUrl((e.target as HTMLInputElement).value)}
        ...${described('edit-url', false, errs.url)} />
    </${Field}>
    <${Field} id="edit-expires" label="Expires" hint="Empty: never. In your time zone." error=${errs.expires}>
      <input id="edit-expires" type="datetime-local" value=${expires} onInput=${(e: Event) => setExpires((e.target as HTMLInputElement).value)}
        ...${described('edit-expires', true, errs.expires)} />
    </${Field}>
    <${Field} id="edit-password" label=${link.password_protected ? 'New password' : 'Password'}
      hint=${link.password_protected ? 'The link has a password. Leave this empty to keep it.' : 'None now. Set one and visitors must type it (4–128 characters).'}
      error=${errs.password}>
      <input id="edit-password" type="password" autocomplete="new-password" value=${password} disabled=${removePassword}
        onInput=${(e: Event) => setPassword((e.target as HTMLInputElement).value)} ...${described('edit-password', true, errs.password)} />
    </${Field}>
    ${link.password_protected
      ? html`<div class="check">
          <input id="edit-remove-password" type="checkbox" checked=${removePassword}
            onChange=${(e: Event) => setRemovePassword((e.target as HTMLInputElement).checked)} />
          <label for="edit-remove-password">Remove the password (anyone with the link is redirected)</label>
        </div>`
      : null}
    <${ErrorMessage} error=${error} fields=${fields} />
    <div class="actions">
      <button type="submit" aria-disabled=${busy ? 'true' : null}>${busy ? 'Saving…' : 'Save changes'}</button>
      ${expires ? html`<button type="button" class="secondary clear-expiry" onClick=${clearExpiry}>Clear expiry</button>` : null}
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
        <dt>Target</dt><dd class="break target">${link.url}</dd>
        <dt>Status</dt><dd>${link.status}</dd>
        <dt>Password</dt><dd class="password-state">${link.password_protected ? 'yes: visitors must type it' : 'none'}</dd>
        <dt>Created</dt><dd>${formatDateTime(link.created_at)}</dd>
        <dt>Updated</dt><dd>${formatDateTime(link.updated_at)}</dd>
        <dt>Expires</dt><dd>${link.expires_at ? formatDateTime(link.expires_at) : 'never'}</dd>
      </dl>
    </section>
    <section class="card" aria-labelledby="clicks-title">
      <div class="row">
        <h2 id="clicks-title">Clicks</h2>
        <button type="button" class="secondary" onClick=${() => !refreshing && load(true)} aria-disabled=${refreshing ? 'true' : null}>${refreshing ? 'Refreshing…' : 'Refresh'}</button>
      </div>
      <${ErrorMessage} error=${error} />
      <ul class="stats">
        <li><strong class="stat-total">${c.total}</strong> in all</li>
        <li><strong>${c.last_24h}</strong> in the last 24 hours</li>
        <li><strong>${c.bots}</strong> by bots (not counted above)</li>
      </ul>
      ${c.imported && c.imported.total > 0
        ? html`<p class="muted small">${c.imported.total} of them were imported from another shortener; they have no date, so the chart does not show them.</p>`
        : null}
      <${ClicksChart} daily=${c.daily} />
      <div class="count-tables">
        <${CountTable} caption="Referrers" name="Referrer" rows=${c.referrers.map((r) => ({ name: r.referrer, count: r.count }))} />
        <${CountTable} caption="Browsers" name="Browser" rows=${c.browsers ?? []} />
        <${CountTable} caption="Operating systems" name="Operating system" rows=${c.os ?? []} />
      </div>
    </section>
    <${QrCode} link=${link} />
    <section class="card"><${EditForm} key=${link.updated_at} link=${link} onSaved=${setLink} /></section>
    <section class="card" aria-labelledby="delete-title">
      <h2 id="delete-title">Delete</h2>
      <p>Deleting stops the short link at once and removes its analytics for good. Its code is never handed out from the pool again; once the server's waiting period has passed (30 days unless configured otherwise), anyone may choose it as a custom alias.</p>
      <${ErrorMessage} error=${deleteError} />
      <button type="button" class="danger" onClick=${() => setConfirming(true)}>Delete link</button>
    </section>
    <${ConfirmDialog} open=${confirming} title=${`Delete ${code}?`}
      text="The short link will stop working and its click statistics will be removed. This cannot be undone."
      confirmLabel="Delete" onConfirm=${remove} onCancel=${() => setConfirming(false)} />
  </div>`;
}
