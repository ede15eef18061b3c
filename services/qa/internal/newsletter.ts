import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { newsletterSubscriptions } from '../../../shared/newsletter/subscriptions.js';
import type { QaDeps } from '../deps.js';
import {
  NewsletterError,
  newsletterErrorHandler,
  NewsletterResult,
  sendPage,
  SubscribeBody,
  TokenQuery,
  wantsHtml,
} from './newsletter-http.js';

/**
 * POST /api/newsletter-subscribe.php and the two links the emails carry:
 * /api/newsletter/confirm?token=… (double opt-in) and /api/newsletter/unsubscribe?token=…: for both, GET shows a
 * button and POST acts (unsubscribe is RFC 8058 one-click). See docs/newsletter.md.
 */
export const newsletterRoutes: FastifyPluginAsyncTypebox<{ deps: QaDeps }> = async (app, { deps }) => {
  const newsletter = newsletterSubscriptions(deps);
  const responses = { 200: NewsletterResult, '4xx': NewsletterError, '5xx': NewsletterError };

  app.post(
    '/newsletter-subscribe.php',
    {
      schema: {
        tags: ['internal'],
        summary: 'Subscribe to the digest, change its frequency, or unsubscribe',
        description:
          'JSON or form-encoded. Subscribing (again) mails a confirmation link; nothing is sent before it is followed. ' +
          'The answer is the same whether or not the address was subscribed. Errors carry `success: false` and the ' +
          'usual `error`, `message`, `code`.',
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        body: SubscribeBody,
        response: responses,
      },
      errorHandler: newsletterErrorHandler,
    },
    async (request) => {
      const { email, action } = request.body;
      // An empty form field counts as absent.
      const frequency = request.body.frequency || 'weekly';
      const message =
        action === 'subscribe'
          ? await newsletter.subscribe(email, frequency, request.id)
          : await newsletter.unsubscribe(email);
      return { success: true as const, message };
    },
  );

  // Mail scanners and link previewers fetch every link of a message: GET only shows a button, and the POST it
  // sends confirms (as the unsubscribe link does), so nobody is subscribed by a scanner.
  app.get(
    '/newsletter/confirm',
    {
      schema: {
        tags: ['internal'],
        summary:
          'The confirmation link: shows a button that POSTs the confirmation (scanners confirm nothing)',
        querystring: TokenQuery,
        response: responses,
      },
      errorHandler: newsletterErrorHandler,
    },
    async (request, reply) => {
      await newsletter.checkConfirmToken(request.query.token);
      if (!wantsHtml(request))
        return { success: true as const, message: 'POST to this address to confirm the subscription.' };
      const action = `?token=${encodeURIComponent(request.query.token)}`;
      const form = `<form method="post" action="${action.replace(/"/g, '&quot;')}"><button type="submit">Confirm my subscription</button></form>`;
      return sendPage(
        reply,
        'Confirm your subscription',
        'Press the button to start receiving the digest.',
        form,
      );
    },
  );

  app.post(
    '/newsletter/confirm',
    {
      schema: {
        tags: ['internal'],
        summary: 'Confirm a subscription (the button of the confirmation page)',
        description: 'No login: the signed token is the authority. Idempotent.',
        querystring: TokenQuery,
        response: responses,
      },
      errorHandler: newsletterErrorHandler,
    },
    async (request, reply) => {
      const message = await newsletter.confirm(request.query.token);
      if (wantsHtml(request)) return sendPage(reply, 'Subscription confirmed', message);
      return { success: true as const, message };
    },
  );

  // A child scope, so that the multipart parser below applies to the one-click route only.
  await app.register(async (scope) => {
    const oneClick = scope.withTypeProvider<TypeBoxTypeProvider>();
    // RFC 8058 clients POST `List-Unsubscribe=One-Click` as multipart/form-data or form-encoded; the token is in
    // the URL, so the body is read (bounded) and ignored.
    oneClick.addContentTypeParser(
      'multipart/form-data',
      { parseAs: 'string', bodyLimit: 16_384 },
      (_req, _body, done) => done(null, {}),
    );

    oneClick.get(
      '/newsletter/unsubscribe',
      {
        schema: {
          tags: ['internal'],
          summary:
            'The unsubscribe link: shows a button that POSTs (link scanners must not unsubscribe anyone)',
          querystring: TokenQuery,
          response: responses,
        },
        errorHandler: newsletterErrorHandler,
      },
      async (request, reply) => {
        await newsletter.checkUnsubscribeToken(request.query.token);
        const message = 'Press the button to stop receiving the digest.';
        if (!wantsHtml(request))
          return {
            success: true as const,
            message: 'POST to this address to unsubscribe (RFC 8058 one-click).',
          };
        const action = `?token=${encodeURIComponent(request.query.token)}`;
        const form = `<form method="post" action="${action.replace(/"/g, '&quot;')}"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`;
        return sendPage(reply, 'Unsubscribe', message, form);
      },
    );

    oneClick.post(
      '/newsletter/unsubscribe',
      {
        schema: {
          tags: ['internal'],
          summary: 'One-click unsubscribe (RFC 8058): the List-Unsubscribe-Post target',
          description: 'No login: the signed token is the authority. Idempotent.',
          querystring: TokenQuery,
          consumes: ['application/x-www-form-urlencoded', 'multipart/form-data'],
          response: responses,
        },
        errorHandler: newsletterErrorHandler,
      },
      async (request, reply) => {
        const message = await newsletter.unsubscribeWithToken(request.query.token);
        if (wantsHtml(request)) return sendPage(reply, 'Unsubscribed', message);
        return { success: true as const, message };
      },
    );
  });
};
