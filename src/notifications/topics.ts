// The messages notifications send between the threads of the process (pubsub/port.ts).
import { topic } from '../pubsub/port';

/** Deliveries for the WebSockets of the HTTP threads: [recipient id, message text] pairs. */
export interface DeliveryMessage {
  items: Array<[recipientId: string, text: string]>;
}

/** From the delivery consumer (a pool thread) to every HTTP thread. */
export const DELIVERY_TOPIC = topic<DeliveryMessage>('notifications.deliver');

/** The outcome of one Web Push request (push-sender.ts, PushOutcome), for the supervisor's metrics. */
export const PUSH_OUTCOME_TOPIC = topic<{ outcome: string }>('notifications.push-outcome');

/** A subscription its push service answered 404 or 410 for: the supervisor deletes it through the writer. */
export const PUSH_GONE_TOPIC = topic<{ id: string; endpoint: string }>('notifications.push-gone');
