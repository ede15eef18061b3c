import { fileURLToPath } from 'node:url';
import path from 'node:path';

/**
 * The real data sets shipped inside the repository (`data/`); AGORA_DATASETS points elsewhere. Used by tests,
 * evaluations and the demo site's first start.
 */
export const DATASETS_DIR = process.env.AGORA_DATASETS
  ? path.resolve(process.env.AGORA_DATASETS)
  : fileURLToPath(new URL('../data', import.meta.url));

export const BEER_DUMP_DIR = path.join(DATASETS_DIR, 'stackexchange-beer');
