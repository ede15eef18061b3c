import cookie from '@fastify/cookie';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { adminSessionsRepository } from '../../shared/db/repositories/admin-sessions.js';
import { clientNetwork } from '../../shared/net/client-network.js';
import { createSigner, loadAppSecret } from '../../shared/secrets.js';
import { errorBody } from '../http/errors.js';
import type { AdminDeps } from './deps.js';
import { html, page } from './html.js';
import { dashboardPage } from './pages/dashboard.js';
import { keysPages } from './pages/keys.js';
import { listsPage } from './pages/lists.js';
import { webhooksPage } from './pages/webhooks.js';
import { newsletterPage } from './pages/newsletter.js';
import { settingsPages } from './pages/settings.js';
import { QUEUES_PATH, queuesBoard } from './queues.js';
import { formBody, sendPage, type AdminContext } from './respond.js';
import { createAdminSessions, type AdminSession } from './session.js';
import { KEY_GROUPS, keyGroup } from '../../shared/keyspace.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in operator's session (admin routes only). */
    adminSession: AdminSession | null;
  }
}

// Sign-in attempts per client network before the login form answers 429 for the rest of the window; a success
// clears the count, so this many failures is what it takes.
const LOGIN_FAILURES = 10;
const LOGIN_WINDOW_SECONDS = 15 * 60;

const sameOrigin = (request: FastifyRequest): boolean => {
  const origin = request.headers.origin;
  return origin === undefined || origin === `${request.protocol}://${request.host}`;
};

/**
 * The operator panel at /admin on the Q&A service. Without ADMIN_TOKEN every /admin URL answers 404 with the
 * error body saying the panel is disabled. With it: a login form, then pages for API keys, settings,
 * newsletter subscribers and the queues (bull-board), all behind one signed session cookie.
 */
export const adminPlugin: FastifyPluginAsync<{ deps: AdminDeps }> = async (app, { deps }) => {
  const token = deps.config.adminToken;
  if (!token) {
    const disabled = async (_request: FastifyRequest, reply: FastifyReply) =>
      reply.status(404).send(errorBody(404, 'The admin panel is disabled: set ADMIN_TOKEN to enable it'));
    app.all('/admin', disabled);
    app.all('/admin/*', disabled);
    return;
  }

  const signer = createSigner(await loadAppSecret(deps.config, deps.database));
  const sessions = createAdminSessions(
    signer,
    token,
    adminSessionsRepository(deps.database.db),
    deps.config.cookieSecure,
  );
  // Sessions of a previous ADMIN_TOKEN end here, not only when their cookie comes back.
  await sessions.prune();
  const loginLimiter = new RateLimiterRedis({
    storeClient: deps.redis,
    keyPrefix: `${keyGroup(deps.config, KEY_GROUPS.admin)}admin-login`,
    points: LOGIN_FAILURES,
    duration: LOGIN_WINDOW_SECONDS,
  });

  await app.register(cookie);
  app.decorateRequest('adminSession', null);
  // Helmet's "no-referrer" makes browsers send `Origin: null` with form posts and fetch() PUTs; the panel's
  // same-origin check needs the real origin, which "same-origin" still keeps from every other site.
  app.addHook('onSend', async (_request, reply) => {
    reply.header('referrer-policy', 'same-origin');
  });

  const loginPage = (request: FastifyRequest, reply: FastifyReply, status: number, error?: string) =>
    sendPage(
      reply,
      status,
      page(
        { title: 'Sign in', flash: error ? { kind: 'error', text: error } : undefined },
        html`<div class="card login">
          <form method="post" action="/admin/login">
            <input type="hidden" name="_csrf" value="${sessions.loginToken(request, reply)}" />
            <div class="field">
              <label for="token">Admin token</label>
              <input
                id="token"
                name="token"
                type="password"
                autocomplete="current-password"
                required
                autofocus
              />
            </div>
            <button type="submit">Sign in</button>
          </form>
          <p class="muted">The token is the service's <code>ADMIN_TOKEN</code>.</p>
        </div>`,
      ),
    );

  app.get('/admin/login', async (request, reply) => {
    if (await sessions.read(request)) return reply.redirect('/admin', 303);
    return loginPage(request, reply, 200);
  });

  app.post('/admin/login', async (request, reply) => {
    const body = formBody(request);
    if (!sameOrigin(request) || !sessions.loginTokenValid(request, body._csrf)) {
      return loginPage(
        request,
        reply,
        403,
        'The form expired or came from another site. Please sign in again.',
      );
    }
    const client = clientNetwork(request.ip, deps.config.rateLimits.ipv6Prefix);
    // Charged before the token is compared, in one atomic step: parallel guesses cannot all pass a check made
    // before any of them was counted.
    try {
      await loginLimiter.consume(client);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      reply.header('retry-after', String(Math.max(1, Math.ceil(err.msBeforeNext / 1000))));
      return loginPage(request, reply, 429, 'Too many failed sign-ins from this address. Try again later.');
    }
    if (!sessions.tokenMatches(body.token)) {
      request.log.warn({ ip: request.ip }, 'admin login failed');
      return loginPage(request, reply, 401, 'Wrong admin token.');
    }
    await loginLimiter.delete(client);
    await sessions.prune();
    await sessions.start(request, reply);
    request.log.info({ ip: request.ip }, 'admin login');
    return reply.redirect('/admin', 303);
  });

  // Everything else needs a session; forms also need their CSRF token.
  await app.register(async (secured: FastifyInstance) => {
    secured.addHook('onRequest', async (request, reply) => {
      request.adminSession = await sessions.read(request);
      // By the route matched, not the raw URL: /admin/queues/%61pi/… reaches the same API route.
      const isApi = request.routeOptions.url?.startsWith(`${QUEUES_PATH}/api/`) === true;
      if (!request.adminSession) {
        if ((request.method === 'GET' || request.method === 'HEAD') && !isApi)
          return reply.redirect('/admin/login', 303);
        return reply.status(401).send(errorBody(401, 'Sign in to the admin panel first'));
      }
      // SameSite=Strict keeps the cookie off cross-site requests; a foreign Origin is refused outright as well.
      if (request.method !== 'GET' && request.method !== 'HEAD' && !sameOrigin(request)) {
        return reply.status(403).send(errorBody(403, 'Cross-origin request refused'));
      }
      // Browsers send Origin with every fetch() that changes state, which is how the queue board calls its API;
      // a request without one is not the board, so it must prove the session with its CSRF token instead.
      // (Form posts carry _csrf in the body, checked below.)
      if (
        isApi &&
        request.method !== 'GET' &&
        request.method !== 'HEAD' &&
        request.headers.origin === undefined &&
        !sessions.csrfValid(request.adminSession, request.headers['x-csrf-token'])
      ) {
        return reply
          .status(403)
          .send(errorBody(403, 'Send an Origin header or the X-CSRF-Token of this session'));
      }
    });

    const context: AdminContext = { deps, sessions };
    await secured.register(async (forms: FastifyInstance) => {
      forms.addHook('preHandler', async (request, reply) => {
        if (request.method !== 'POST') return;
        if (!sessions.csrfValid(request.adminSession!, formBody(request)._csrf)) {
          return sendPage(
            reply,
            403,
            page(
              { title: 'Form expired', active: '/admin', csrf: sessions.csrfToken(request.adminSession!) },
              html`<div class="card">
                <p>
                  This form was not issued by this session (missing or wrong CSRF token). Go back, reload the
                  page and submit it again.
                </p>
              </div>`,
            ),
          );
        }
      });
      forms.post('/admin/logout', async (request, reply) => {
        await sessions.end(request, reply, request.adminSession);
        return reply.redirect('/admin/login', 303);
      });
      forms.post('/admin/logout-everywhere', async (request, reply) => {
        const ended = await sessions.endAll(request, reply);
        request.log.info({ ended }, 'admin signed out every session');
        return reply.redirect('/admin/login', 303);
      });
      await dashboardPage(forms, context);
      await keysPages(forms, context);
      await settingsPages(forms, context);
      await newsletterPage(forms, context);
      await listsPage(forms, context);
      await webhooksPage(forms, context);
    });
    await queuesBoard(secured, deps);
  });
};
