import type { Runtime } from '../../shared/runtime.js';

/** What the admin panel needs from its process (the Q&A service's runtime). */
export type AdminDeps = Pick<Runtime, 'config' | 'logger' | 'database' | 'redis' | 'queues'>;
