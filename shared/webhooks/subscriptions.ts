import { randomUUID } from 'node:crypto';
import type { Config } from '../config.js';
import { checkCallbackUrl, enqueueDelivery, redeliver, WEBHOOK_SCHEDULE } from '../delivery/index.js';
import type { Database } from '../db/client.js';
import { webhooksRepository, webhookSubject, type SubscriptionRow } from '../db/repositories/webhooks.js';
import { NotFoundError, ValidationError } from '../errors.js';
import type { Queues } from '../queues/producer.js';
import { WEBHOOK_EVENTS, type WebhookBody } from './events.js';

/**
 * Managing webhook subscriptions (POST/GET/PATCH/DELETE /webhooks…). A subscription belongs to the user of the key
 * that created it; another user's is a 404, never a 403. Its secret is returned once, by the creation.
 */

export const MAX_SUBSCRIPTIONS_PER_USER = 25;
export const MAX_TAGS = 20;

export type WebhookDeps = { database: Database; queues: Queues; config: Pick<Config, 'webhook'> };

export interface SubscriptionInput {
  url?: string;
  events?: string[];
  tags?: string[];
  enabled?: boolean;
}

/** The delivery schedule of webhooks: WEBHOOK_SCHEDULE's attempts, WEBHOOK_BACKOFF_MS's first wait. */
export const webhookSchedule = (config: Pick<Config, 'webhook'>) => ({
  attempts: WEBHOOK_SCHEDULE.attempts,
  backoffMs: config.webhook.qaBackoffMs,
});

function checkEvents(events: string[]): string[] {
  const unknown = events.filter((e) => !(WEBHOOK_EVENTS as readonly string[]).includes(e));
  if (unknown.length > 0)
    throw new ValidationError(
      `Unknown event ${unknown.map((e) => `"${e}"`).join(', ')}: one of ${WEBHOOK_EVENTS.join(', ')}`,
    );
  if (events.length === 0) throw new ValidationError('events needs at least one event');
  return [...new Set(events)];
}

function checkTags(tags: string[]): string[] {
  const normalised = [...new Set(tags.map((t) => t.trim().toLowerCase()))];
  if (normalised.some((t) => t.length === 0)) throw new ValidationError('A tag cannot be empty');
  if (normalised.length > MAX_TAGS) throw new ValidationError(`At most ${MAX_TAGS} tags`);
  return normalised;
}

export function webhookSubscriptions(deps: WebhookDeps) {
  const repository = webhooksRepository(deps.database);
  const checkUrl = (url: string) => checkCallbackUrl(url, { allowPrivate: deps.config.webhook.allowPrivate });
  const owned = async (userId: number, id: number) => {
    const row = await repository.find(userId, id);
    if (!row) throw new NotFoundError('Webhook subscription not found');
    return row;
  };

  return {
    async create(
      userId: number,
      input: { url: string; events: string[]; tags?: string[] },
    ): Promise<SubscriptionRow & { secret: string }> {
      const events = checkEvents(input.events);
      const tags = checkTags(input.tags ?? []);
      await checkUrl(input.url);
      if ((await repository.count(userId)) >= MAX_SUBSCRIPTIONS_PER_USER)
        throw new ValidationError(`At most ${MAX_SUBSCRIPTIONS_PER_USER} webhook subscriptions per user`);
      return repository.create({ userId, url: input.url, events, tags });
    },

    list: (userId: number) => repository.list(userId),
    get: owned,

    async update(userId: number, id: number, input: SubscriptionInput): Promise<SubscriptionRow> {
      if (Object.values(input).every((v) => v === undefined))
        throw new ValidationError('Nothing to change: give url, events, tags or enabled');
      await owned(userId, id);
      const changes = {
        url: input.url,
        events: input.events === undefined ? undefined : checkEvents(input.events),
        tags: input.tags === undefined ? undefined : checkTags(input.tags),
        enabled: input.enabled,
      };
      if (changes.url !== undefined) await checkUrl(changes.url);
      const row = await repository.update(userId, id, changes);
      if (!row) throw new NotFoundError('Webhook subscription not found');
      return row;
    },

    async remove(userId: number, id: number): Promise<void> {
      if (!(await repository.remove(userId, id))) throw new NotFoundError('Webhook subscription not found');
    },

    /** Sends a `ping` event now (enabled or not), to check the receiver and its signature check. */
    async ping(userId: number, id: number): Promise<string> {
      const target = await repository.target(userId, id);
      if (!target) throw new NotFoundError('Webhook subscription not found');
      const body: WebhookBody = {
        id: `ping_${randomUUID()}`,
        event: 'ping',
        created_at: new Date().toISOString(),
        data: { subscription_id: id },
      };
      return enqueueDelivery(deps, {
        url: target.url,
        secret: target.secret,
        event: 'ping',
        body,
        subject: webhookSubject(id),
        schedule: webhookSchedule(deps.config),
      });
    },

    /** One page of the subscription's deliveries, newest first, by cursor or page number. */
    async deliveries(userId: number, id: number, params: { page: number; limit: number; cursor?: string }) {
      await owned(userId, id);
      return repository.deliveries(id, params);
    },

    async redeliver(userId: number, id: number, deliveryId: string): Promise<string> {
      await owned(userId, id);
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(deliveryId))
        throw new NotFoundError('No such delivery');
      if (!(await repository.deliveryBelongs(id, deliveryId))) throw new NotFoundError('No such delivery');
      return redeliver(deps, deliveryId);
    },
  };
}
