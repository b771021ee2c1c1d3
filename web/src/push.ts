// Web Push, opted into per browser: the service worker (/app/sw.js, scope `/`) is registered only
// when the person turns push on, then subscribed with the server's VAPID key, and the subscription
// is sent to POST /api/push/subscriptions. This browser remembers which subscription it made for
// which user (`perch.push.<user id>`), so that it can remove it again and renew it on later visits.
import { ApiError, Problem, api, type PushSubscriptionRecord } from './api';
import { forgetStoredRecords } from './stored-records';

export const SERVICE_WORKER_URL = '/app/sw.js';
const SCOPE = '/';
const ACTIVATE_MS = 10_000;
const STORAGE_PREFIX = 'perch.push.';

interface Remembered {
  id: string;
  endpoint: string;
}

function storageKey(userId: string): string {
  return `${STORAGE_PREFIX}${userId}`;
}

function remembered(userId: string): Remembered | null {
  try {
    const v = JSON.parse(localStorage.getItem(storageKey(userId)) ?? 'null');
    return v && typeof v.id === 'string' && typeof v.endpoint === 'string' ? v : null;
  } catch {
    return null;
  }
}

function remember(userId: string, r: Remembered | null): void {
  try {
    if (r) localStorage.setItem(storageKey(userId), JSON.stringify(r));
    else localStorage.removeItem(storageKey(userId));
  } catch {
    // Not remembered: the next visit shows push as off.
  }
}

/** Why push cannot work in this browser, or null when it can. */
export function pushUnsupportedReason(): string | null {
  if (!window.isSecureContext) return 'Push notifications need perch to be served over HTTPS.';
  if (!('serviceWorker' in navigator) || !('PushManager' in window) || !('Notification' in window)) {
    return 'This browser does not offer push notifications.';
  }
  return null;
}

export interface PushState {
  supported: boolean;
  reason: string | null;
  permission: NotificationPermission | null;
  /** This browser has a push subscription that it registered for this user. */
  on: boolean;
  /** The service worker's registration, when there is one. */
  scope: string | null;
}

async function registration(): Promise<ServiceWorkerRegistration | undefined> {
  return navigator.serviceWorker.getRegistration(SCOPE);
}

/** The server's VAPID public key; null when the server sends no push messages (push.enabled: false). */
async function serverKey(): Promise<string | null> {
  try {
    return (await api.get<{ public_key: string }>('/api/push/vapid-public-key')).public_key;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

export async function pushState(userId: string): Promise<PushState> {
  const reason = pushUnsupportedReason();
  if (reason) return { supported: false, reason, permission: null, on: false, scope: null };
  if ((await serverKey()) === null) {
    return { supported: false, reason: 'This server does not send push notifications.', permission: null, on: false, scope: null };
  }
  const reg = await registration();
  const sub = reg ? await reg.pushManager.getSubscription() : null;
  const mine = remembered(userId);
  return {
    supported: true,
    reason: null,
    permission: Notification.permission,
    on: !!sub && !!mine && mine.endpoint === sub.endpoint,
    scope: reg?.scope ?? null,
  };
}

function base64UrlBytes(s: string): Uint8Array<ArrayBuffer> {
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (s.length % 4)) % 4);
  const bin = atob(b64);
  const out = new Uint8Array(new ArrayBuffer(bin.length));
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Resolves once the registration has an active worker (bounded). */
function activated(reg: ServiceWorkerRegistration): Promise<void> {
  if (reg.active) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const worker = reg.installing ?? reg.waiting;
    const timer = window.setTimeout(() => reject(new Problem('The service worker did not start.')), ACTIVATE_MS);
    worker?.addEventListener('statechange', () => {
      if (worker.state === 'activated') {
        window.clearTimeout(timer);
        resolve();
      } else if (worker.state === 'redundant') {
        window.clearTimeout(timer);
        reject(new Problem('The service worker could not be installed.'));
      }
    });
  });
}

/**
 * Turns push on for this browser and user. Throws an Error whose message a person can read.
 * `stillSignedIn` says whether the user's session is still this tab's: asked before the server is
 * sent the subscription and again once it has stored it. False when the session ended meanwhile
 * (nothing is left on in this browser then), true when push is on.
 */
export async function enablePush(userId: string, stillSignedIn: () => boolean): Promise<boolean> {
  const reason = pushUnsupportedReason();
  if (reason) throw new Problem(reason);
  const publicKey = await serverKey();
  if (publicKey === null) throw new Problem('This server does not send push notifications.');
  const permission = await Notification.requestPermission();
  if (permission !== 'granted') {
    throw new Problem('Notifications are blocked for this site. Allow them in the browser’s site settings, then try again.');
  }
  let reg: ServiceWorkerRegistration;
  try {
    reg = await navigator.serviceWorker.register(SERVICE_WORKER_URL, { scope: SCOPE });
    await activated(reg);
  } catch (err) {
    throw new Problem(`The browser did not start perch’s service worker: ${err instanceof Error ? err.message : String(err)}`);
  }
  const options = { userVisibleOnly: true, applicationServerKey: base64UrlBytes(publicKey) };
  let sub: PushSubscription;
  try {
    sub = await reg.pushManager.subscribe(options);
  } catch (err) {
    // A subscription made with another server key must go before a new one can be made.
    const old = await reg.pushManager.getSubscription();
    if (!old || (err instanceof DOMException && err.name !== 'InvalidStateError')) {
      throw new Problem(`The browser refused to subscribe to push messages: ${err instanceof Error ? err.message : String(err)}`);
    }
    await old.unsubscribe();
    sub = await reg.pushManager.subscribe(options);
  }
  // A session that ended meanwhile (the permission prompt and the service worker's start can
  // outlast it, and so can the server's answer) already cleared this browser: the subscription
  // goes, rather than be sent with whatever key the tab holds now or be remembered for the next
  // person here; one the server stored is forgotten when the push service refuses its next
  // message.
  const ended = async () => {
    await sub.unsubscribe().catch(() => undefined);
    return false;
  };
  if (!stillSignedIn()) return ended();
  const record = await api.post<PushSubscriptionRecord>('/api/push/subscriptions', sub.toJSON());
  if (!stillSignedIn()) return ended();
  remember(userId, { id: record.id, endpoint: record.endpoint });
  return true;
}

/**
 * Turns push off for this browser and user: the server forgets the subscription, the browser too.
 * The browser's side is done even when the server's fails (its error is thrown after): a
 * subscription the browser dropped is refused by the push service at the server's next message,
 * and the server forgets it then (docs/notifications.md), so no message reaches this browser.
 */
export async function disablePush(userId: string): Promise<void> {
  const mine = remembered(userId);
  try {
    if (mine) await api.del(`/api/push/subscriptions/${encodeURIComponent(mine.id)}`);
  } catch (err) {
    // Already gone (the push service said so, or it was removed elsewhere): that is the goal.
    if (!(err instanceof ApiError && err.status === 404)) throw err;
  } finally {
    remember(userId, null);
    await unsubscribeHere();
  }
}

async function unsubscribeHere(): Promise<void> {
  const reg = pushUnsupportedReason() ? undefined : await registration();
  const sub = reg ? await reg.pushManager.getSubscription() : null;
  await sub?.unsubscribe();
}

/**
 * When a session ends in this browser (signed out, a key refused, another tab signing out):
 * whatever push subscription the browser holds, and every user's record of one, go, so the next
 * person at this browser receives nobody's notifications. Best effort: a browser that refuses
 * leaves a subscription the server can still reach until it is turned off.
 */
export async function endPushHere(): Promise<void> {
  forgetStoredRecords(STORAGE_PREFIX);
  await unsubscribeHere().catch(() => undefined);
}

/**
 * At start: a subscription this browser made for this user is sent again (the same endpoint answers
 * 200 and updates its keys), so one the browser renewed meanwhile keeps working; one the browser
 * dropped is removed from the server too. Failures are left for the next visit.
 */
export async function renewPush(userId: string, stillSignedIn: () => boolean): Promise<void> {
  const mine = remembered(userId);
  if (!mine || pushUnsupportedReason()) return;
  try {
    const reg = await registration();
    const sub = reg ? await reg.pushManager.getSubscription() : null;
    if (!sub || Notification.permission !== 'granted') {
      await disablePush(userId);
      return;
    }
    const record = await api.post<PushSubscriptionRecord>('/api/push/subscriptions', sub.toJSON());
    // A session that ended meanwhile took the record and the browser's subscription with it.
    if (stillSignedIn()) remember(userId, { id: record.id, endpoint: record.endpoint });
  } catch {
    // Next visit.
  }
}
