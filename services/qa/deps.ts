import type { Runtime } from '../../shared/runtime.js';

/** What the Q&A app needs from its process; tests pass a runtime of their own. */
export type QaDeps = Pick<Runtime, 'config' | 'logger' | 'database' | 'redis' | 'queues'> &
  Partial<Pick<Runtime, 'replicas'>>;
