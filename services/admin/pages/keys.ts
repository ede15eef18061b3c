import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { createApiKey } from '../../../shared/access/admin.js';
import { PLANS, SCOPES, type Plan, type Scope } from '../../../shared/access/keys.js';
import { apiKeysRepository } from '../../../shared/db/repositories/api-keys.js';
import { usersRepository } from '../../../shared/db/repositories/users.js';
import { AppError } from '../../../shared/errors.js';
import { csrfField, formatDate, html } from '../html.js';
import { formBody, formPage, type AdminContext } from '../respond.js';
import { KEY_GROUPS, keyGroup } from '../../../shared/keyspace.js';

const SCOPE_HELP: Record<Scope, string> = {
  'qa:write': 'ask, answer, comment, vote, accept, edit (Q&A API)',
  verify: 'POST /verify and /bulk-verify (verification service)',
  webhooks: 'manage Q&A webhook subscriptions (/webhooks)',
  admin: 'every scope, and /verify/self-check',
};

const USERNAME = /^[\p{L}\p{N}_.-]{1,64}$/u;

const asList = (value: unknown): string[] =>
  (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter(
    (v): v is string => typeof v === 'string',
  );
const text = (value: unknown): string => (typeof value === 'string' ? value.trim() : '');

/** API keys: create (the clear key is shown once, in the answer to the POST, never in a URL), list, revoke. */
export async function keysPages(app: FastifyInstance, { deps, sessions }: AdminContext): Promise<void> {
  const keys = apiKeysRepository(deps.database.db);
  const users = usersRepository(deps.database.db);
  // A reloaded or double-clicked "create" must not mint a second key: each rendered form carries a one-time id.
  const onceKey = (id: string) => `${keyGroup(deps.config, KEY_GROUPS.admin)}admin-form:${id}`;
  const firstSubmission = async (id: unknown): Promise<boolean> =>
    typeof id === 'string' &&
    /^[A-Za-z0-9_-]{16,64}$/.test(id) &&
    (await deps.redis.set(onceKey(id), '1', 'EX', 86_400, 'NX')) === 'OK';

  const render = formPage(sessions, { title: 'API keys', active: '/admin/keys' }, async (csrf) => {
    const list = await keys.list();
    const rows = list.map(
      (k) =>
        html`<tr>
          <td class="num">${k.id}</td>
          <td><code>agora_${k.prefix}_…</code></td>
          <td>${k.username}</td>
          <td>${k.name || html`<span class="muted">—</span>`}</td>
          <td>${k.plan}</td>
          <td>${k.scopes.map((s) => html`<code>${s}</code> `)}</td>
          <td>${formatDate(k.createdAt)}</td>
          <td>${formatDate(k.lastUsedAt)}</td>
          <td>
            ${k.revokedAt ? html`<span class="pill bad" title="${formatDate(k.revokedAt)}">revoked</span>` : html`<span class="pill on">active</span>`}
          </td>
          <td>
            ${
              k.revokedAt
                ? ''
                : html`<form method="post" action="/admin/keys/${k.id}/revoke">
                    ${csrfField(csrf)}<button class="danger" type="submit" aria-label="Revoke key ${k.id}">
                      Revoke
                    </button>
                  </form>`
            }
          </td>
        </tr>`,
    );
    const body = html` <section class="card">
        <h2>Create a key</h2>
        <form method="post" action="/admin/keys">
          ${csrfField(csrf)}<input
            type="hidden"
            name="_once"
            value="${randomBytes(16).toString('base64url')}"
          />
          <div class="row">
            <div class="field">
              <label for="username">User</label
              ><input
                id="username"
                name="username"
                type="text"
                required
                maxlength="64"
                placeholder="user name (the key's owner and author of its posts)"
              />
            </div>
            <div class="field">
              <label for="name">Label</label
              ><input id="name" name="name" type="text" maxlength="100" placeholder="what the key is for" />
            </div>
            <div class="field">
              <label for="plan">Plan</label
              ><select id="plan" name="plan">
                ${PLANS.map((p) => html`<option value="${p}">${p}</option>`)}
              </select>
            </div>
          </div>
          <div class="field checks">
            <span class="label">Scopes</span>
            ${SCOPES.map(
              (s) =>
                html`<label title="${SCOPE_HELP[s]}"
                    ><input type="checkbox" name="scopes" value="${s}" ${s === 'qa:write' ? 'checked' : ''} />
                    <code>${s}</code> <span class="muted">${SCOPE_HELP[s]}</span></label
                  ><br />`,
            )}
          </div>
          <div class="field checks">
            <label
              ><input type="checkbox" name="create_user" value="1" /> Create the user if it does not
              exist</label
            >
          </div>
          <button type="submit">Create key</button>
        </form>
      </section>
      <section class="card">
        <h2>Keys <span class="muted">(${list.length})</span></h2>
        ${
          list.length === 0
            ? html`<p class="muted">No keys yet.</p>`
            : html`<table>
                <thead>
                  <tr>
                    <th class="num">ID</th>
                    <th>Key</th>
                    <th>User</th>
                    <th>Label</th>
                    <th>Plan</th>
                    <th>Scopes</th>
                    <th>Created</th>
                    <th>Last used</th>
                    <th>State</th>
                    <th></th>
                  </tr>
                </thead>
                <tbody>
                  ${rows}
                </tbody>
              </table>`
        }
      </section>`;
    return body;
  });

  app.get('/admin/keys', async (request, reply) => render(request, reply, 200));

  app.post('/admin/keys', async (request, reply) => {
    const body = formBody(request);
    const username = text(body.username);
    const plan = text(body.plan) || 'authenticated';
    const scopes = [...new Set(asList(body.scopes))];
    const name = text(body.name).slice(0, 100);
    const fail = (message: string) => render(request, reply, 400, { kind: 'error', text: message });
    if (!(await firstSubmission(body._once))) {
      return render(request, reply, 409, {
        kind: 'error',
        text: 'This form was already submitted (a reload?): no new key was created. The key it made was shown once.',
      });
    }
    if (!USERNAME.test(username)) return fail('User: 1 to 64 letters, digits, "_", "." or "-".');
    if (!(PLANS as readonly string[]).includes(plan)) return fail(`Plan must be one of ${PLANS.join(', ')}.`);
    if (scopes.length === 0 || scopes.some((s) => !(SCOPES as readonly string[]).includes(s)))
      return fail(`Pick at least one scope from ${SCOPES.join(', ')}.`);
    if (body.create_user === '1' && !(await users.findByUsername(username))) await users.create({ username });
    try {
      const created = await createApiKey(deps.database.db, {
        username,
        plan: plan as Plan,
        scopes: scopes as Scope[],
        name,
      });
      request.log.info({ keyId: created.id, username, plan, scopes }, 'admin created an API key');
      return render(request, reply, 201, {
        kind: 'ok',
        text: html`Key ${created.id} created for <strong>${username}</strong> (${plan}; ${scopes.join(', ')}).
          Copy it now — it is stored only as a hash and will not be shown again:<code
            class="secret"
            id="new-key"
            >${created.key}</code
          >
          Its webhook secret, which signs the callbacks and webhooks sent for this key (X-Agora-Signature, see
          docs/webhooks.md), is shown once too:<code class="secret" id="new-webhook-secret"
            >${created.webhook_secret}</code
          >`,
      });
    } catch (err) {
      if (err instanceof AppError && err.statusCode === 404)
        return fail(`No user named "${username}". Tick "Create the user" to create it with the key.`);
      throw err;
    }
  });

  app.post<{ Params: { id: string } }>('/admin/keys/:id/revoke', async (request, reply) => {
    // Decimal digits only (as every id of the API): `1e3` or `0x10` is not a key id.
    const id = /^[0-9]{1,20}$/.test(request.params.id) ? Number(request.params.id) : NaN;
    if (!Number.isSafeInteger(id) || id <= 0)
      return render(request, reply, 400, { kind: 'error', text: 'Unknown key id.' });
    const revoked = await keys.revoke(id);
    if (revoked) request.log.info({ keyId: id }, 'admin revoked an API key');
    return render(
      request,
      reply,
      revoked ? 200 : 404,
      revoked
        ? { kind: 'ok', text: `Key ${id} revoked: requests with it now get 401.` }
        : { kind: 'error', text: `Key ${id} is unknown or already revoked.` },
    );
  });
}
