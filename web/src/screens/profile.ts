// A user's profile: counts, follow and unfollow, and three lists: posts, followers, following.
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api, byHandle, withQuery, type Page, type Post, type User } from '../api';
import { ErrorMessage, Loading, MoreItems, PostList, ScreenTitle, announce, useFeed } from '../components';
import { formatDateTime, plural } from '../format';
import { followingSet, noteFollowing } from '../following';
import { href } from '../router';
import { session, setMe } from '../session';
import { useStore } from '../store';

export type ProfileTab = 'posts' | 'followers' | 'following';

function FollowButton({ user, onChange }: { user: User; onChange: (u: User) => void }) {
  const me = useStore(session).me!;
  const [following, setFollowing] = useState<boolean | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    let current = true;
    followingSet(me.id).then(
      (ids) => current && setFollowing(ids.has(user.id)),
      (err) => current && setError(err),
    );
    return () => {
      current = false;
    };
  }, [user.id]);

  async function toggle() {
    if (busy || following === null) return;
    setBusy(true);
    setError(null);
    const want = !following;
    try {
      if (want) await api.post(`/api/users/${user.id}/follow`);
      else await api.del(`/api/users/${user.id}/follow`);
      noteFollowing(me.id, user.id, want);
      setFollowing(want);
      // Counts change in the follow's transaction: read both records again.
      const [them, self] = await Promise.all([api.get<User>(`/api/users/${user.id}`), api.get<User>('/api/me')]);
      onChange(them);
      setMe(self);
      announce(want ? `You follow @${user.handle} now.` : `You no longer follow @${user.handle}.`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return html`<div class="follow">
    ${following === null && !error
      ? html`<${Loading} label="Checking whether you follow…" />`
      : html`<button type="button" class=${following ? 'secondary' : ''} onClick=${toggle} aria-disabled=${busy || following === null ? 'true' : null}>
          ${following ? `Unfollow @${user.handle}` : `Follow @${user.handle}`}
        </button>`}
    <${ErrorMessage} error=${error} />
  </div>`;
}

/** A user's followers or followees; read again whenever `version` changes (a follow made here). */
function UserList({ handle, tab, version }: { handle: string; tab: 'followers' | 'following'; version: number }) {
  const feed = useFeed(
    (cursor) => api.get<Page<User>>(withQuery(`/api/users/${byHandle(handle)}/${tab}`, { limit: 20, cursor })),
    `${handle}/${tab}/${version}`,
  );
  return html`<div>
    ${feed.items.length === 0 && feed.done && !feed.error
      ? html`<p class="muted">${tab === 'followers' ? `Nobody follows @${handle} yet.` : `@${handle} follows nobody yet.`}</p>`
      : null}
    <ul class="user-list">
      ${feed.items.map(
        (u) => html`<li key=${u.id}>
          <a href=${href('/users/' + u.handle)} class="handle">@${u.handle}</a>
          <span class="muted small">${plural(u.followers_count, 'follower')} · ${u.following_count} following</span>
        </li>`,
      )}
    </ul>
    ${feed.items.length > 0 || !feed.done ? html`<${MoreItems} feed=${feed} label="Load more" endText="That is everyone." />` : null}
  </div>`;
}

function UserPosts({ user }: { user: User }) {
  const feed = useFeed(async (cursor) => {
    const page = await api.get<Page<Post>>(withQuery(`/api/users/${user.id}/posts`, { limit: 20, cursor }));
    // A user's posts carry the author's id only; the profile knows the handle.
    return { ...page, items: page.items.map((p) => ({ ...p, author: { id: user.id, handle: user.handle } })) };
  }, `${user.id}/posts`);
  return html`<${PostList} feed=${feed} empty=${`@${user.handle} has not posted yet.`} />`;
}

export function Profile({ handle, tab }: { handle: string; tab: ProfileTab }) {
  const me = useStore(session).me;
  const [user, setUser] = useState<User | null>(null);
  const [error, setError] = useState<unknown>(null);
  // Bumped by a follow or unfollow made here: the lists shown may hold the follower.
  const [followsChanged, setFollowsChanged] = useState(0);

  useEffect(() => {
    let current = true;
    setUser(null);
    setError(null);
    api.get<User>(`/api/users/${byHandle(handle)}`).then(
      (u) => current && setUser(u),
      (err) => current && setError(err),
    );
    return () => {
      current = false;
    };
  }, [handle]);

  // The address may spell the handle in another case: once the user is read, its own spelling.
  const name = user?.handle ?? handle;
  const tabs: [ProfileTab, string, string][] = [
    ['posts', 'Posts', `/users/${name}`],
    ['followers', 'Followers', `/users/${name}/followers`],
    ['following', 'Following', `/users/${name}/following`],
  ];
  return html`<div class="screen">
    <${ScreenTitle}>@${name}</${ScreenTitle}>
    ${error ? html`<${ErrorMessage} error=${error} />` : null}
    ${!user && !error ? html`<${Loading} />` : null}
    ${user
      ? html`<section class="card profile" aria-label="Profile">
          <p class="muted small">Joined ${formatDateTime(user.created_at)}</p>
          <p class="profile-counts">
            <a href=${href(`/users/${user.handle}/followers`)}><strong>${user.followers_count}</strong> ${user.followers_count === 1 ? 'follower' : 'followers'}</a>
            <a href=${href(`/users/${user.handle}/following`)}><strong>${user.following_count}</strong> following</a>
          </p>
          ${me && me.id !== user.id ? html`<${FollowButton} user=${user} onChange=${(u: User) => {
                setUser(u);
                setFollowsChanged((n) => n + 1);
              }} />` : me ? html`<p class="muted small">This is you.</p>` : null}
        </section>
        <nav class="tabs" aria-label="Profile sections">
          <ul>
            ${tabs.map(([t, label, path]) => html`<li><a href=${href(path)} aria-current=${t === tab ? 'page' : undefined}>${label}</a></li>`)}
          </ul>
        </nav>
        <section aria-label=${tabs.find(([t]) => t === tab)![1]}>
          ${tab === 'posts' ? html`<${UserPosts} user=${user} />` : html`<${UserList} handle=${user.handle} tab=${tab} version=${followsChanged} />`}
        </section>`
      : null}
  </div>`;
}
