// The application shell: landmarks, navigation, the route table and the live region.
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { describeError, retryable } from './api';
import { LiveRegion, ScreenTitle, announce } from './components';
import { features, type Features } from './features';
import { resetFollowing } from './following';
import { notificationSentence } from './notification-text';
import { onNotification, startNotifications, stopNotifications, unreadCount } from './notifications';
import { disablePush, renewPush } from './push';
import { href, match, usePath } from './router';
import { followOtherTabs, resume, session, signOut, thisSession } from './session';
import { useStore } from './store';
import { userById } from './users';
import { Home } from './screens/home';
import { LinkDetails } from './screens/link-details';
import { Links } from './screens/links';
import { NotificationSettings } from './screens/notification-settings';
import { Notifications } from './screens/notifications';
import { PostPage } from './screens/post';
import { Profile } from './screens/profile';
import { Search } from './screens/search';
import { SignIn } from './screens/signin';

interface ScreenRoute {
  pattern: string;
  title(params: Record<string, string>): string;
  /** Null: the screen is not built yet; its route says so instead of pretending. */
  render: ((params: Record<string, string>) => VNode) | null;
  /** The server capability the screen needs (features.ts). */
  feature?: keyof Features;
}

const ROUTES: ScreenRoute[] = [
  { pattern: '/', title: () => 'Home', render: () => html`<${Home} />` },
  { pattern: '/links', title: () => 'Links', render: () => html`<${Links} />` },
  { pattern: '/links/:code', title: (p) => `Link ${p.code}`, render: (p) => html`<${LinkDetails} code=${p.code} />` },
  { pattern: '/posts/:id', title: () => 'Post', render: (p) => html`<${PostPage} key=${p.id} id=${p.id} />` },
  { pattern: '/users/:handle', title: (p) => `@${p.handle}`, render: (p) => html`<${Profile} handle=${p.handle} tab="posts" />` },
  { pattern: '/users/:handle/followers', title: (p) => `Followers of @${p.handle}`, render: (p) => html`<${Profile} handle=${p.handle} tab="followers" />` },
  { pattern: '/users/:handle/following', title: (p) => `Followed by @${p.handle}`, render: (p) => html`<${Profile} handle=${p.handle} tab="following" />` },
  // Screens of capabilities a server may not have (features.ts): offered only when it has them.
  { pattern: '/search', title: () => 'Search', render: () => html`<${Search} />`, feature: 'search' },
  { pattern: '/notifications', title: () => 'Notifications', render: () => html`<${Notifications} />`, feature: 'notifications' },
  { pattern: '/notifications/settings', title: () => 'Notification settings', render: () => html`<${NotificationSettings} />`, feature: 'notifications' },
];

interface NavItem {
  label: string;
  path: string;
  /** Also current on these route patterns. */
  also?: string[];
  route: string;
  /** A count shown beside the label (unread notifications). */
  count?: number | null;
}

/** Says what arrived over /ws, politely, on whatever screen is open. */
function useLiveAnnouncements(active: boolean): void {
  useEffect(() => {
    if (!active) return;
    return onNotification((n) => {
      Promise.all(n.actor_ids.slice(0, 2).map((id) => userById(id).then((u) => u?.handle ?? null, () => null))).then((handles) =>
        announce(`New notification: ${notificationSentence(n, handles)}.`),
      );
    });
  }, [active]);
}

function NotAvailable({ title, feature }: { title: string; feature?: keyof Features }) {
  const have = useStore(features);
  const serverHasIt = feature ? have[feature] : false;
  return html`<div class="screen">
    <${ScreenTitle}>${title}</${ScreenTitle}>
    <p>${serverHasIt
      ? `This server offers ${title.toLowerCase()}, but this version of the web client has no screen for it yet.`
      : `${title} is not available on this server yet.`}</p>
    <p><a href=${href('/')}>Go to your home timeline</a></p>
  </div>`;
}

function NotFound() {
  return html`<div class="screen">
    <${ScreenTitle}>Page not found</${ScreenTitle}>
    <p>There is no such screen in perch's web client.</p>
    <p><a href=${href('/')}>Go to your home timeline</a></p>
  </div>`;
}

function resolve(path: string): { route: ScreenRoute | null; params: Record<string, string> } {
  for (const route of ROUTES) {
    const params = match(route.pattern, path);
    if (params) return { route, params };
  }
  return { route: null, params: {} };
}

export function App() {
  const s = useStore(session);
  const have = useStore(features);
  const unread = useStore(unreadCount);
  const path = usePath();
  // The screen, without its query: a new search on the search screen is not a new screen.
  const screenPath = path.split('?')[0];
  const [starting, setStarting] = useState(true);
  const [startError, setStartError] = useState<unknown>(null);
  const firstRender = useRef(true);

  useEffect(() => {
    resume()
      .catch((err) => setStartError(err))
      .finally(() => setStarting(false));
    return followOtherTabs();
  }, []);

  const { route, params } = resolve(path);
  const signedIn = !!s.key && !!s.me;
  const title = !signedIn ? 'Sign in' : route ? route.title(params) : 'Page not found';
  const live = signedIn && have.notifications;

  // Notifications (count and /ws) run while signed in, on every screen.
  useEffect(() => {
    if (!live || !s.key || !s.me) return;
    startNotifications(s.key);
    void renewPush(s.me.id, thisSession());
    return () => stopNotifications();
  }, [live, s.key]);
  useLiveAnnouncements(live);

  // A session the server ended (a key revoked meanwhile, or found revoked at start) is said in the
  // live region, in place of what it said last ("Signed in as …"); the sign-in screen shows it too.
  useEffect(() => {
    if (s.endedBecause) announce(`Signed out. ${s.endedBecause}`);
  }, [s.endedBecause]);

  useEffect(() => {
    document.title = `${signedIn && unread ? `(${unread}) ` : ''}${title} · perch`;
  }, [title, unread, signedIn]);

  // A layout effect, run in the same task as the render: a plain effect waits for the next frame,
  // and a key typed into the new screen in between (its first field) would lose the rest of what
  // is typed to the heading.
  useLayoutEffect(() => {
    if (starting) return;
    const first = firstRender.current;
    firstRender.current = false;
    // Signing in is all the sign-in screen is for: its key field takes the focus, on load too.
    // (Its field is described by the screen's text, so a screen reader hears what it is for.)
    if (!signedIn) {
      document.getElementById('api-key')?.focus();
      return;
    }
    // Moving to another screen moves focus to its heading, so a screen reader starts there.
    if (!first) document.querySelector<HTMLElement>('main h1')?.focus();
  }, [screenPath, signedIn, starting, startError]);

  async function doSignOut() {
    // Push to this browser is for the person signed in: stop it while the key still works.
    const me = s.me;
    if (me) await disablePush(me.id).catch(() => undefined);
    signOut();
    resetFollowing();
    announce('Signed out.');
  }

  const nav: NavItem[] = s.me
    ? [
        { label: 'Home', path: '/', route: '/' },
        { label: 'Links', path: '/links', route: '/links', also: ['/links/:code'] },
        { label: 'Profile', path: `/users/${s.me.handle}`, route: '/users/:handle', also: ['/users/:handle/followers', '/users/:handle/following'] },
      ]
    : [];
  // Screens of capabilities the server has, before the profile.
  const optional: NavItem[] = [];
  if (have.search && ROUTES.some((r) => r.pattern === '/search' && r.render)) optional.push({ label: 'Search', path: '/search', route: '/search' });
  if (have.notifications && ROUTES.some((r) => r.pattern === '/notifications' && r.render)) {
    optional.push({ label: 'Notifications', path: '/notifications', route: '/notifications', also: ['/notifications/settings'], count: unread });
  }
  if (nav.length) nav.splice(2, 0, ...optional);
  const isCurrent = (item: NavItem) => {
    if (!route) return false;
    if (item.label === 'Profile') return route.pattern.startsWith('/users/') && params.handle === s.me?.handle;
    return route.pattern === item.route || (item.also ?? []).includes(route.pattern);
  };

  let content: VNode;
  if (starting) content = html`<p class="muted" role="status">Loading…</p>`;
  else if (startError) {
    // Trying again helps only when the failure may pass (the network, the server, a rate
    // limit); any other answer to the stored key would come again, so signing in with another
    // key is offered instead, and beside Try again too.
    const again = retryable(startError);
    content = html`<div class="screen">
      <${ScreenTitle}>perch</${ScreenTitle}>
      <p class="error" role="alert">${describeError(startError)}</p>
      <p class="actions">
        ${again ? html`<button type="button" onClick=${() => window.location.reload()}>Try again</button>` : null}
        <button type="button" class=${again ? 'secondary' : undefined} onClick=${() => {
          signOut();
          setStartError(null);
        }}>Sign in with another key</button>
      </p>
    </div>`;
  }
  else if (!signedIn) content = html`<${SignIn} />`;
  else if (!route) content = html`<${NotFound} />`;
  else if (!route.render) content = html`<${NotAvailable} title=${route.title(params)} feature=${route.feature} />`;
  else content = route.render(params);

  return html`
    <a class="skip-link" href="#main" onClick=${(e: Event) => {
      // The fragment is the route: focus the main region instead of following the link.
      e.preventDefault();
      document.getElementById('main')?.focus();
    }}>Skip to content</a>
    <header class="top">
      <div class="top-inner">
        <a class="brand" href=${href('/')}><span aria-hidden="true" class="brand-mark"></span>perch</a>
        ${signedIn
          ? html`<nav aria-label="Main">
              <ul>
                ${nav.map(
                  (item) => html`<li><a href=${href(item.path)} aria-current=${isCurrent(item) ? 'page' : undefined} data-nav=${item.label.toLowerCase()}>
                    ${item.label}${item.count
                      ? html`<span class="nav-count" aria-hidden="true">${item.count > 99 ? '99+' : item.count}</span><span class="visually-hidden">, ${item.count} unread</span>`
                      : null}
                  </a></li>`,
                )}
              </ul>
            </nav>
            <div class="who">
              <span class="muted small">@${s.me!.handle}</span>
              <button type="button" class="secondary small" onClick=${doSignOut}>Sign out</button>
            </div>`
          : null}
      </div>
    </header>
    <main id="main" tabindex="-1">${content}</main>
    <footer class="bottom"><p class="muted small">perch · short links and a microblog on your own server</p></footer>
    <${LiveRegion} />
  `;
}
