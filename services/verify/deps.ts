import type { Runtime } from '../../shared/runtime.js';

export type VerifyDeps = Pick<Runtime, 'config' | 'logger' | 'database' | 'redis' | 'queues'>;
