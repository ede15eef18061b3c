import { FREQUENCIES } from '../queues/newsletter.js';

export { FREQUENCIES };
export type Frequency = (typeof FREQUENCIES)[number];

export const isFrequency = (value: unknown): value is Frequency =>
  (FREQUENCIES as readonly unknown[]).includes(value);
