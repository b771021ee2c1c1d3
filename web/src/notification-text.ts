// How a notification reads ("@bob and 2 others liked your post"), shared by the notifications
// screen and the service worker's push notifications. No DOM here: the worker has none.

export type NotificationType = 'like' | 'reply' | 'follow';

export interface NotificationItem {
  id: string;
  type: NotificationType;
  actor_ids: string[];
  actor_count: number;
  post_id?: string | null;
  read: boolean;
  created_at: string;
  updated_at: string;
  priority: boolean;
}

/** "@bob", "@bob and @carol", "@bob and 3 others"; unknown handles read "someone". */
export function actorsText(handles: (string | null)[], count: number): string {
  const named = handles.map((h) => (h ? '@' + h : 'someone'));
  const first = named[0] ?? 'someone';
  if (count <= 1) return first;
  if (count === 2 && named.length >= 2) return `${first} and ${named[1]}`;
  const others = count - 1;
  return `${first} and ${others} other${others === 1 ? '' : 's'}`;
}

/** What happened, after the actors: "liked your post", "replied to your post", "followed you". */
export function actionText(type: NotificationType): string {
  switch (type) {
    case 'like':
      return 'liked your post';
    case 'reply':
      return 'replied to your post';
    case 'follow':
      return 'followed you';
  }
}

/** The whole sentence, without the post's text. */
export function notificationSentence(n: Pick<NotificationItem, 'type' | 'actor_count'>, handles: (string | null)[]): string {
  return `${actorsText(handles, n.actor_count)} ${actionText(n.type)}`;
}

/** A post's text cut to `max` code points for a one-line quote. */
export function excerpt(text: string, max = 80): string {
  const chars = [...text.replace(/\s+/g, ' ').trim()];
  return chars.length <= max ? chars.join('') : chars.slice(0, max - 1).join('') + '…';
}
