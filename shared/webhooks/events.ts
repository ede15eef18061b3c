/**
 * The Q&A webhook events, each fired once per committed change (migration 0012 says which change fires which).
 * Deleted posts fire post.deleted, whatever their kind; comment.deleted is a comment's.
 */
export const WEBHOOK_EVENTS = [
  'question.created',
  'question.edited',
  'answer.created',
  'answer.edited',
  'answer.accepted',
  'comment.created',
  'comment.deleted',
  'post.deleted',
  'poll.closed',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** The body every webhook delivery carries. `id` names the event: the same for every subscription it goes to. */
export interface WebhookBody {
  id: string;
  event: WebhookEvent | 'ping';
  /** When the change committed (ISO 8601, UTC). */
  created_at: string;
  data: Record<string, unknown>;
}
