import { Type } from 'typebox';
import { defineQueue, retrying, Unread } from './define.js';

export const FREQUENCIES = ['daily', 'weekly', 'monthly'] as const;
const frequency = Type.Union([Type.Literal('daily'), Type.Literal('weekly'), Type.Literal('monthly')]);
// A period key as shared/newsletter/period.ts writes it: daily-2024-05-09, weekly-2024-05-06, monthly-2024-04.
const period = Type.String({ pattern: '^(daily|weekly)-\\d{4}-\\d{2}-\\d{2}$|^monthly-\\d{4}-\\d{2}$' });

/**
 * Newsletter: a confirmation email per subscribe request; digests built on schedules (one per frequency, at
 * NEWSLETTER_DIGEST_HOUR UTC) and fanned out as one send job per subscriber, with the job id
 * `digest-<period>-<subscriber>` so a re-run fan-out adds nothing twice.
 */
export const newsletterQueue = defineQueue({
  name: 'newsletter',
  jobs: {
    // frequency: the one asked for, confirmed when the link is followed (a confirmed subscriber's change).
    'send-confirmation': { subscriberId: Type.Integer(), frequency },
    // period: omitted by the schedulers (the job's scheduled time picks the last complete period).
    'build-digest': { frequency, period: Type.Optional(period) },
    'send-digest': {
      subscriberId: Type.Integer(),
      period,
      questionIds: Type.Array(Type.Integer(), { minItems: 1, maxItems: 100 }),
    },
  },
  results: { 'send-confirmation': Unread, 'build-digest': Unread, 'send-digest': Unread },
  // SMTP 4xx and lost connections retry: 2 s, 4 s, … about a minute in total over 6 attempts.
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
