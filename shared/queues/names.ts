/**
 * The name of every queue, the one list: the configuration checks WORKER_QUEUES against it, the catalog
 * (catalog.ts) must declare exactly these (tsc checks), and the metrics and the admin dashboard report each.
 * A leaf module, so that the configuration can read it without loading the job schemas.
 */
export const QUEUE_NAMES = [
  'ping',
  'verify',
  'ai',
  'newsletter',
  'polls',
  'views',
  'deliveries',
  'verify-lists',
  'qa-feed',
  'verify-hosts',
] as const;

export type QueueName = (typeof QUEUE_NAMES)[number];
