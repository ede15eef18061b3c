import type { Static, TSchema } from 'typebox';
import { aiQueue } from './ai.js';
import { newsletterQueue } from './newsletter.js';
import { pingQueue } from './ping.js';
import { pollsQueue } from './polls.js';
import { verifyQueue } from './verify.js';
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
  'verify-lists': verifyListsQueue,
} as const;

export type Catalog = typeof catalog;
export type CatalogQueue = keyof Catalog;
export type JobName<Q extends CatalogQueue> = keyof Catalog[Q]['jobs'] & string;
type SchemaOf<Q extends CatalogQueue, J extends JobName<Q>> = Catalog[Q]['jobs'][J] extends infer S extends TSchema ? S : never;
export type Payload<Q extends CatalogQueue, J extends JobName<Q>> = Static<SchemaOf<Q, J>>;
