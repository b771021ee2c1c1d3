// The messages notifications send between the threads of the process (pubsub/port.ts).
import { topic } from '../pubsub/port';
import type { PushTarget } from './store';

/** Deliveries for the WebSockets of the HTTP threads: [recipient id, message text] pairs. */
export interface DeliveryMessage {
  items: Array<[recipientId: string, text: string]>;
}

/** From the delivery consumer (a pool thread) to every HTTP thread. */
export const DELIVERY_TOPIC = topic<DeliveryMessage>('notifications.deliver');

/** Web Push messages for the supervisor's sender (push-sender.ts): subscriptions and message texts. */
export interface PushMessage {
  items: Array<{ target: PushTarget; text: string }>;
}

/** From the delivery consumer (a pool thread) to the supervisor. */
export const PUSH_TOPIC = topic<PushMessage>('notifications.push');
