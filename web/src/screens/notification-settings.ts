// Notification settings: which kinds to receive, muted threads, priority users
// (GET/PUT /api/notifications/preferences), and push notifications in this browser (push.ts).
// Also the "mute this thread" button of a post's page.
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api, byHandle, type NotificationPreferences, type Post, type User } from '../api';
import { ErrorMessage, Loading, ScreenTitle, announce } from '../components';
import { excerpt } from '../notification-text';
import { disablePush, enablePush, pushState, type PushState } from '../push';
import { href } from '../router';
import { session, thisSession } from '../session';
import { useStore } from '../store';
import { postById, userById } from '../users';

const TYPE_LABELS: [keyof NotificationPreferences['types'], string][] = [
  ['like', 'Likes of my posts'],
  ['reply', 'Replies to my posts'],
  ['follow', 'New followers'],
];

const PREFERENCES = '/api/notifications/preferences';

interface Named<T> {
  id: string;
  /** Null: it no longer exists. */
  value: T | null;
}

function MutedPost({ item, onRemove }: { item: Named<Post>; onRemove: () => void }) {
  const label = item.value ? `“${excerpt(item.value.text, 60)}” by @${item.value.author?.handle ?? 'someone'}` : 'a deleted post';
  return html`<li>
    ${item.value ? html`<a href=${href('/posts/' + item.id)}>${label}</a>` : html`<span class="muted">${label}</span>`}
    <button type="button" class="secondary small" onClick=${onRemove} aria-label=${`Unmute ${label}`}>Unmute</button>
  </li>`;
}

function PreferencesForm() {
  const me = useStore(session).me!;
  const [prefs, setPrefs] = useState<NotificationPreferences | null>(null);
  const [muted, setMuted] = useState<Named<Post>[]>([]);
  const [priority, setPriority] = useState<Named<User>[]>([]);
  const [handle, setHandle] = useState('');
  const [loadError, setLoadError] = useState<unknown>(null);
  const [error, setError] = useState<unknown>(null);
  const [addError, setAddError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [dirty, setDirty] = useState(false);

  async function show(p: NotificationPreferences) {
    // The form appears once both lists are read: shown before, it would list no one, and saving
    // then would send the lists empty.
    const [posts, users] = await Promise.all([
      Promise.all(p.muted_post_ids.map(async (id) => ({ id, value: await postById(id).catch(() => null) }))),
      Promise.all(p.priority_user_ids.map(async (id) => ({ id, value: await userById(id).catch(() => null) }))),
    ]);
    setMuted(posts);
    setPriority(users);
    setPrefs(p);
    setDirty(false);
  }

  useEffect(() => {
    api.get<NotificationPreferences>(PREFERENCES).then(show, setLoadError);
  }, []);

  if (!prefs) return loadError ? html`<${ErrorMessage} error=${loadError} />` : html`<${Loading} />`;

  async function addPriority(e: Event) {
    e.preventDefault();
    setAddError(null);
    const h = handle.trim().replace(/^@/, '');
    if (!h) return;
    // One's own actions never notify oneself, so the server refuses oneself as a priority person.
    const notMe = `@${h}: that is you; your own actions never notify you.`;
    if (h.toLowerCase() === me.handle.toLowerCase()) {
      setAddError(notMe);
      return;
    }
    try {
      const user = await api.get<User>(`/api/users/${byHandle(h)}`);
      if (user.id === me.id) {
        setAddError(notMe);
        return;
      }
      if (!priority.some((p) => p.id === user.id)) setPriority([...priority, { id: user.id, value: user }]);
      setHandle('');
      setDirty(true);
      announce(`@${user.handle} added; save to keep the change.`);
    } catch (err) {
      setAddError(err instanceof Error ? `@${h}: ${err.message}` : String(err));
    }
  }

  async function save(e: Event) {
    e.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(null);
    try {
      // The server refuses ids of posts deleted since they were muted; they mute nothing any more.
      const body: NotificationPreferences = {
        types: prefs!.types,
        muted_post_ids: muted.filter((m) => m.value !== null).map((m) => m.id),
        priority_user_ids: priority.filter((p) => p.value !== null).map((p) => p.id),
      };
      const saved = await api.put<NotificationPreferences>(PREFERENCES, body);
      await show(saved);
      announce('Notification settings saved.');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const setType = (type: keyof NotificationPreferences['types'], on: boolean) => {
    setPrefs({ ...prefs, types: { ...prefs.types, [type]: on } });
    setDirty(true);
  };

  return html`<form class="card stack" onSubmit=${save} aria-labelledby="prefs-title">
    <h2 id="prefs-title">What to be notified of</h2>
    <fieldset>
      <legend>Notify me of</legend>
      ${TYPE_LABELS.map(
        ([type, label]) => html`<div class="check">
          <input type="checkbox" id=${'type-' + type} checked=${prefs.types[type]}
            onChange=${(e: Event) => setType(type, (e.target as HTMLInputElement).checked)} />
          <label for=${'type-' + type}>${label}</label>
        </div>`,
      )}
    </fieldset>

    <h3 id="muted-title">Muted threads</h3>
    <p class="muted small">No notifications about these posts or any reply under them. Mute a thread from its post’s page.</p>
    ${muted.length
      ? html`<ul class="plain pref-list" aria-labelledby="muted-title">
          ${muted.map((m) => html`<${MutedPost} key=${m.id} item=${m} onRemove=${() => {
            setMuted(muted.filter((x) => x.id !== m.id));
            setDirty(true);
          }} />`)}
        </ul>`
      : html`<p>No muted threads.</p>`}

    <h3 id="priority-title">Priority people</h3>
    <p class="muted small">Each of their likes, replies and follows is a notification of its own, never grouped with others.</p>
    ${priority.length
      ? html`<ul class="plain pref-list" aria-labelledby="priority-title">
          ${priority.map(
            (p) => html`<li key=${p.id}>
              ${p.value ? html`<a href=${href('/users/' + p.value.handle)} class="handle">@${p.value.handle}</a>` : html`<span class="muted">a deleted account</span>`}
              <button type="button" class="secondary small" aria-label=${`Remove @${p.value?.handle ?? 'deleted account'} from priority people`}
                onClick=${() => {
                  setPriority(priority.filter((x) => x.id !== p.id));
                  setDirty(true);
                }}>Remove</button>
            </li>`,
          )}
        </ul>`
      : html`<p>No priority people.</p>`}
    <div class="field">
      <label for="priority-handle">Add a person by handle</label>
      <div class="inline-form">
        <input id="priority-handle" type="text" autocomplete="off" spellcheck="false" autocapitalize="off" placeholder="@handle"
          value=${handle} onInput=${(e: Event) => setHandle((e.target as HTMLInputElement).value)}
          onKeyDown=${(e: KeyboardEvent) => e.key === 'Enter' && addPriority(e)}
          aria-describedby=${addError ? 'priority-error' : undefined} aria-invalid=${addError ? 'true' : undefined} />
        <button type="button" class="secondary" onClick=${addPriority}>Add</button>
      </div>
      ${addError ? html`<p class="error" role="alert" id="priority-error">${addError}</p>` : null}
    </div>

    <${ErrorMessage} error=${error} />
    <div class="actions">
      <button type="submit" aria-disabled=${busy ? 'true' : null}>${busy ? 'Saving…' : 'Save settings'}</button>
      ${dirty ? html`<span class="muted small">Unsaved changes</span>` : null}
    </div>
  </form>`;
}

function PushSettings() {
  const me = useStore(session).me!;
  const [state, setState] = useState<PushState | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const refresh = () => pushState(me.id).then(setState, setError);
  useEffect(() => {
    void refresh();
  }, [me.id]);

  async function toggle(on: boolean) {
    if (busy) return;
    setBusy(true);
    setError(null);
    try {
      if (on) {
        // A session that ended meanwhile left nothing on, and has said so itself.
        if (!(await enablePush(me.id, thisSession()))) return;
      } else {
        await disablePush(me.id);
      }
      announce(on ? 'Push notifications are on in this browser.' : 'Push notifications are off in this browser.');
    } catch (err) {
      setError(err);
    } finally {
      await refresh();
      setBusy(false);
    }
  }

  return html`<section class="card stack" aria-labelledby="push-title">
    <h2 id="push-title">Push notifications in this browser</h2>
    <p class="muted small">While no perch page of yours is open, the server can send your notifications to this
      browser, which shows them even when perch is closed. Nothing is sent while a page is open: it shows them itself.</p>
    ${!state
      ? html`<${Loading} />`
      : !state.supported
        ? html`<p>${state.reason}</p>`
        : html`<p class="push-state">${state.on ? 'On in this browser.' : 'Off in this browser.'}
              ${state.permission === 'denied' && !state.on ? ' The browser blocks notifications for this site now.' : ''}</p>
            <div class="actions">
              ${state.on
                ? html`<button type="button" class="secondary" onClick=${() => toggle(false)} aria-disabled=${busy ? 'true' : null}>Turn off push notifications</button>`
                : html`<button type="button" onClick=${() => toggle(true)} aria-disabled=${busy ? 'true' : null}>${busy ? 'Turning on…' : 'Turn on push notifications'}</button>`}
            </div>`}
    <${ErrorMessage} error=${error} />
  </section>`;
}

export function NotificationSettings() {
  return html`<div class="screen">
    <p class="crumbs"><a href=${href('/notifications')}>Notifications</a> / Settings</p>
    <${ScreenTitle}>Notification settings</${ScreenTitle}>
    <${PreferencesForm} />
    <${PushSettings} />
  </div>`;
}

/** On a post's page: mute or unmute notifications from its thread (the post and every reply under it). */
export function MuteThread({ postId }: { postId: string }) {
  const [muted, setMuted] = useState<boolean | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    let current = true;
    api.get<NotificationPreferences>(PREFERENCES).then(
      (p) => current && setMuted(p.muted_post_ids.includes(postId)),
      (err) => current && setError(err),
    );
    return () => {
      current = false;
    };
  }, [postId]);

  async function toggle() {
    if (busy) return;
    setBusy(true);
    setError(null);
    try {
      // PUT replaces the whole object: read the current one first, so nothing else is lost.
      const p = await api.get<NotificationPreferences>(PREFERENCES);
      const want = !p.muted_post_ids.includes(postId);
      const ids = want ? [...p.muted_post_ids, postId] : p.muted_post_ids.filter((id) => id !== postId);
      // Muted posts deleted since are refused by the server; they mute nothing any more.
      const live = await Promise.all(ids.map(async (id) => (id === postId || (await postById(id).catch(() => null)) ? id : null)));
      const saved = await api.put<NotificationPreferences>(PREFERENCES, { ...p, muted_post_ids: live.filter((id): id is string => id !== null) });
      setMuted(saved.muted_post_ids.includes(postId));
      announce(want ? 'Thread muted: no notifications from it.' : 'Thread unmuted.');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  if (muted === null && !error) return null;
  return html`<div class="mute-thread">
    ${muted === null
      ? null
      : html`<button type="button" class="secondary small" aria-pressed=${muted ? 'true' : 'false'} onClick=${toggle} aria-disabled=${busy ? 'true' : null}>
          Mute this thread
        </button>
        <span class="muted small">${muted ? 'Muted: no notifications from this post or replies under it.' : ''}</span>`}
    <${ErrorMessage} error=${error} />
  </div>`;
}
