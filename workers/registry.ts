import type { QueueName } from '../shared/config.js';
import { aiProcessor } from './ai/processor.js';
import { deliveriesProcessor } from './deliveries/processor.js';
import { newsletterProcessor } from './newsletter/processor.js';
import { pingProcessor } from './ping/processor.js';
import { pollsProcessor } from './polls/processor.js';
import { qaFeedProcessor } from './qa-feed/processor.js';
import type { ProcessorFactory } from './types.js';
import { verifyListsProcessor } from './lists/processor.js';
import { verifyProcessor } from './verify/processor.js';
import { viewsProcessor } from './views/processor.js';

/** The processor of each queue. A queue without one here cannot be served by a worker yet. */
export const processors: { [Q in QueueName]?: ProcessorFactory<Q> } = {
  ping: pingProcessor,
  ai: aiProcessor,
  newsletter: newsletterProcessor,
  polls: pollsProcessor,
  views: viewsProcessor,
  verify: verifyProcessor,
  deliveries: deliveriesProcessor,
  'verify-lists': verifyListsProcessor,
  'qa-feed': qaFeedProcessor,
};
