import { fileURLToPath } from 'node:url';
import path from 'node:path';

/**
 * The real data sets shipped beside the repository (`../shared/datasets`, as on developer machines and CI);
 * AGORA_DATASETS points elsewhere. Used by tests, evaluations and demos, never by the services.
 */
export const DATASETS_DIR = process.env.AGORA_DATASETS
  ? path.resolve(process.env.AGORA_DATASETS)
  : fileURLToPath(new URL('../../shared/datasets', import.meta.url));

export const BEER_DUMP_DIR = path.join(DATASETS_DIR, 'stackexchange-beer');
