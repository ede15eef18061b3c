import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { MAX_URL_LENGTH } from '../../../shared/delivery/index.js';
import { WEBHOOK_EVENTS } from '../../../shared/webhooks/events.js';
import { MAX_TAGS, webhookSubscriptions } from '../../../shared/webhooks/subscriptions.js';
import { requireScope } from '../../http/auth.js';
import { nameComponents } from '../../http/components.js';
import type { QaDeps } from '../deps.js';
import { Cursor, ErrorResponse, Id, Limit, Page, Pagination, success } from '../schemas.js';

const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601, UTC' });
const Events = Type.Array(Type.Enum([...WEBHOOK_EVENTS]), { minItems: 1, maxItems: WEBHOOK_EVENTS.length });
const Tags = Type.Array(Type.String({ minLength: 1, maxLength: 35 }), {
  maxItems: MAX_TAGS,
  description:
    "Only events of questions carrying one of these tags (a post's or poll's question); empty: all",
});
const Url = Type.String({
  minLength: 1,
  maxLength: MAX_URL_LENGTH,
  description: 'http(s) URL the events are POSTed to',
});

export const WebhookSubscription = Type.Object({
  id: Type.Integer(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  tags: Type.Array(Type.String()),
  enabled: Type.Boolean({
    description: 'False once disabled (by its owner, or after a run of failed attempts)',
  }),
  consecutive_failures: Type.Integer({
    description: 'Failed delivery attempts since the last delivered one',
  }),
  disabled_at: Type.Union([Timestamp, Type.Null()]),
  disabled_reason: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const NewWebhookSubscription = Type.Object({
  ...WebhookSubscription.properties,
  secret: Type.String({
    description: 'Signs every delivery (X-Agora-Signature); shown only in this answer, keep it',
  }),
});

export const WebhookDelivery = Type.Object({
  id: Type.String({ format: 'uuid', description: 'The X-Agora-Delivery header of its requests' }),
  event: Type.String(),
  state: Type.Enum(['pending', 'delivered', 'failed', 'cancelled'], {
    description: 'cancelled: the subscription was disabled before it was sent; redeliver sends it again',
  }),
  attempts: Type.Integer(),
  last_status: Type.Union([Type.Integer(), Type.Null()], { description: 'HTTP status of the last attempt' }),
  last_error: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
  delivered_at: Type.Union([Timestamp, Type.Null()]),
});

export const WebhookDeliveryRef = Type.Object({ delivery_id: Type.String({ format: 'uuid' }) });

const WebhookKey = Type.Object({ id: Id('Subscription id') });
const DeliveryKey = Type.Object({
  id: Id('Subscription id'),
  delivery: Type.String({ maxLength: 36, description: 'Delivery id' }),
});

nameComponents({ WebhookSubscription, NewWebhookSubscription, WebhookDelivery, WebhookDeliveryRef });

const SECURITY = [{ bearer: [] }];

/**
 * Webhook subscriptions (shared/webhooks): keys with the `webhooks` scope manage their user's subscriptions. The
 * scope is checked before the body is validated.
 */
export const webhooksRoutes: FastifyPluginAsyncTypebox<{ deps: QaDeps }> = async (app, { deps }) => {
  app.addHook('preValidation', requireScope('webhooks'));
  const subscriptions = webhookSubscriptions(deps);
  const userOf = (request: FastifyRequest) => request.principal!.userId;
  const tags = ['webhooks'];

  app.post(
    '/webhooks',
    {
      schema: {
        tags,
        summary: 'Subscribe a URL to Q&A events',
        description:
          'Deliveries are signed POSTs `{id, event, created_at, data}`, retried with backoff for about a day. ' +
          'The answer carries the signing secret, once.',
        security: SECURITY,
        body: Type.Object(
          { url: Url, events: Events, tags: Type.Optional(Tags) },
          { additionalProperties: false },
        ),
        response: { 201: success(NewWebhookSubscription), '4xx': ErrorResponse },
      },
    },
    async (request, reply) => {
      const created = await subscriptions.create(userOf(request), request.body);
      return reply
        .code(201)
        .header('location', `/api/webhooks/${created.id}`)
        .send({ success: true as const, data: created });
    },
  );

  app.get(
    '/webhooks',
    {
      schema: {
        tags,
        summary: 'Your webhook subscriptions, oldest first',
        security: SECURITY,
        response: {
          200: success(Type.Object({ webhooks: Type.Array(WebhookSubscription) })),
          '4xx': ErrorResponse,
        },
      },
    },
    async (request) => ({
      success: true as const,
      data: { webhooks: await subscriptions.list(userOf(request)) },
    }),
  );

  app.get(
    '/webhooks/:id',
    {
      schema: {
        tags,
        summary: 'One webhook subscription',
        security: SECURITY,
        params: WebhookKey,
        response: { 200: success(WebhookSubscription), '4xx': ErrorResponse },
      },
    },
    async (request) => ({
      success: true as const,
      data: await subscriptions.get(userOf(request), request.params.id),
    }),
  );

  app.patch(
    '/webhooks/:id',
    {
      schema: {
        tags,
        summary: 'Change a subscription; enabled: true enables it again after failures',
        security: SECURITY,
        params: WebhookKey,
        body: Type.Object(
          {
            url: Type.Optional(Url),
            events: Type.Optional(Events),
            tags: Type.Optional(Tags),
            enabled: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false },
        ),
        response: { 200: success(WebhookSubscription), '4xx': ErrorResponse },
      },
    },
    async (request) => ({
      success: true as const,
      data: await subscriptions.update(userOf(request), request.params.id, request.body),
    }),
  );

  app.delete(
    '/webhooks/:id',
    {
      schema: {
        tags,
        summary: 'Delete a subscription (deliveries already under way still complete)',
        security: SECURITY,
        params: WebhookKey,
        response: { 204: Type.Null({ description: 'Deleted' }), '4xx': ErrorResponse },
      },
    },
    async (request, reply) => {
      await subscriptions.remove(userOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/webhooks/:id/ping',
    {
      schema: {
        tags,
        summary: 'Send a ping event to the subscription now',
        security: SECURITY,
        params: WebhookKey,
        response: { 202: success(WebhookDeliveryRef), '4xx': ErrorResponse },
      },
    },
    async (request, reply) => {
      const id = await subscriptions.ping(userOf(request), request.params.id);
      return reply.code(202).send({ success: true as const, data: { delivery_id: id } });
    },
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      schema: {
        tags,
        summary: "A subscription's deliveries, newest first, with their state",
        description: 'Newest first (ties: delivery id). Walk every delivery with `cursor` and next_cursor.',
        security: SECURITY,
        params: WebhookKey,
        querystring: Type.Object({ page: Page, limit: Limit, cursor: Cursor }),
        response: {
          200: success(Type.Object({ deliveries: Type.Array(WebhookDelivery), pagination: Pagination })),
          '4xx': ErrorResponse,
        },
      },
    },
    async (request) => ({
      success: true as const,
      data: await subscriptions.deliveries(userOf(request), request.params.id, request.query),
    }),
  );

  app.post(
    '/webhooks/:id/deliveries/:delivery/redeliver',
    {
      schema: {
        tags,
        summary: 'Send a delivered or failed delivery again (same id and body, a new signature)',
        security: SECURITY,
        params: DeliveryKey,
        response: { 202: success(WebhookDeliveryRef), '4xx': ErrorResponse },
      },
    },
    async (request, reply) => {
      const { id, delivery } = request.params;
      await subscriptions.redeliver(userOf(request), id, delivery);
      return reply.code(202).send({ success: true as const, data: { delivery_id: delivery } });
    },
  );
};
