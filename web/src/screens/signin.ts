// Sign in with an API key (made by `perch keygen`).
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { ErrorMessage, ScreenTitle, announce } from '../components';
import { session, signIn } from '../session';
import { useStore } from '../store';

export function SignIn() {
  // Why the last session ended: the live region announces it as it happens (app.ts), so here it
  // is shown, not announced a second time as an alert.
  const ended = useStore(session).endedBecause;
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function submit(e: Event) {
    e.preventDefault();
    if (busy || key.trim() === '') return;
    setBusy(true);
    setError(null);
    try {
      const me = await signIn(key.trim());
      announce(`Signed in as @${me.handle}.`);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  }

  return html`<section class="signin card" aria-labelledby="signin-title">
    <${ScreenTitle}><span id="signin-title">Sign in to perch</span></${ScreenTitle}>
    <p id="signin-intro">Use an API key made with <code>perch keygen --user <var>handle</var></code> on the server.
      The key is kept in this browser until you sign out.</p>
    ${ended && !error ? html`<p class="error">${ended}</p>` : null}
    <form onSubmit=${submit} class="stack">
      <label for="api-key">API key</label>
      <input id="api-key" name="api-key" type="password" autocomplete="off" spellcheck="false" required
        value=${key} onInput=${(e: Event) => setKey((e.target as HTMLInputElement).value)}
        aria-describedby=${error ? 'signin-error signin-intro' : 'signin-intro'} />
      <${ErrorMessage} error=${error} id="signin-error" />
      <button type="submit" aria-disabled=${busy || key.trim() === '' ? 'true' : null}>${busy ? 'Signing in…' : 'Sign in'}</button>
    </form>
  </section>`;
}
