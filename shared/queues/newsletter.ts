import { Type } from 'typebox';
import { defineQueue, retrying } from './define.js';

export const FREQUENCIES = ['daily', 'weekly', 'monthly'] as const;
const frequency = Type.Union(FREQUENCIES.map((f) => Type.Literal(f)));

export const newsletterQueue = defineQueue({
  name: 'newsletter',
  jobs: {
    'send-confirmation': { subscriberId: Type.Integer() },
    'build-digest': { frequency, period: Type.Optional(Type.String()) },
    'send-digest': { subscriberId: Type.Integer(), period: Type.String(), questionIds: Type.Array(Type.Integer()) },
  },
  defaultJobOptions: retrying(6, 2000),
  schedulers: (config) => {
    const hour = config.newsletter.digestHourUtc;
    const patterns = { daily: `0 ${hour} * * *`, weekly: `0 ${hour} * * 1`, monthly: `0 ${hour} 1 * *` };
    return FREQUENCIES.map((f) => ({
      id: `digest-${f}`,
      job: 'build-digest',
      payload: { frequency: f },
      repeat: { pattern: patterns[f], tz: 'UTC' },
    }));
  },
});
