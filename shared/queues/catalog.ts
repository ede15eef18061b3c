import type { Static, TSchema } from 'typebox';
import { aiQueue } from './ai.js';
import type { QueueName } from './names.js';
import { deliveriesQueue } from './deliveries.js';
import { newsletterQueue } from './newsletter.js';
import { pingQueue } from './ping.js';
import { pollsQueue } from './polls.js';
import { qaFeedQueue } from './qa-feed.js';
import { verifyQueue } from './verify.js';
import { verifyHostsQueue } from './verify-hosts.js';
import { verifyListsQueue } from './verify-lists.js';
import { viewsQueue } from './views.js';

/** Every queue and job of the system, declared once. */
export const catalog = {
  ping: pingQueue,
  verify: verifyQueue,
  ai: aiQueue,
  newsletter: newsletterQueue,
  polls: pollsQueue,
  views: viewsQueue,
  deliveries: deliveriesQueue,
  'verify-lists': verifyListsQueue,
  'qa-feed': qaFeedQueue,
  'verify-hosts': verifyHostsQueue,
} as const satisfies Record<QueueName, unknown>;

export type Catalog = typeof catalog;
export type CatalogQueue = keyof Catalog;
export type JobName<Q extends CatalogQueue> = keyof Catalog[Q]['jobs'] & string;
type SchemaOf<Q extends CatalogQueue, J extends JobName<Q>> = Catalog[Q]['jobs'][J] extends infer S extends
  TSchema
  ? S
  : never;
export type Payload<Q extends CatalogQueue, J extends JobName<Q>> = Static<SchemaOf<Q, J>>;
type ResultSchemaOf<Q extends CatalogQueue, J extends JobName<Q>> = Catalog[Q]['results'][J &
  keyof Catalog[Q]['results']] extends infer S extends TSchema
  ? S
  : never;
/** What a job's handler returns, as its queue declares it (checked where a producer waits for it). */
export type Result<Q extends CatalogQueue, J extends JobName<Q>> = Static<ResultSchemaOf<Q, J>>;
