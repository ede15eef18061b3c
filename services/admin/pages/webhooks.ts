import type { FastifyInstance } from 'fastify';
import { webhooksRepository } from '../../../shared/db/repositories/webhooks.js';
import { html, page } from '../html.js';
import { sendPage, type AdminContext } from '../respond.js';

const SHOWN = 200;

/**
 * Q&A webhook subscriptions of every user, disabled ones first, with why they were disabled. Read-only: owners
 * enable them again with PATCH /webhooks/{id} {enabled: true}. URLs and reasons are user content (escaped by html).
 */
export async function webhooksPage(app: FastifyInstance, { deps, sessions }: AdminContext): Promise<void> {
  const webhooks = webhooksRepository(deps.database);
  app.get('/admin/webhooks', async (request, reply) => {
    const csrf = sessions.csrfToken(request.adminSession!);
    const subscriptions = await webhooks.all(SHOWN);
    const rows = subscriptions.map(
      (s) =>
        html`<tr>
          <td class="num">${s.id}</td>
          <td>${s.username}</td>
          <td><code>${s.url}</code></td>
          <td>
            ${s.events.join(', ')}${s.tags.length > 0 ? html`<br /><span class="muted">tags: ${s.tags.join(', ')}</span>` : ''}
          </td>
          <td>
            ${
              s.enabled
                ? html`<span class="pill on">enabled</span>`
                : html`<span class="pill bad">disabled</span><br /><span class="muted"
                      >${s.disabled_reason ?? ''} (${(s.disabled_at ?? '').slice(0, 16).replace('T', ' ')}
                      UTC)</span
                    >`
            }
          </td>
          <td class="num">${s.consecutive_failures}</td>
        </tr>`,
    );
    const body = html`<section class="card">
      <h2>Webhook subscriptions <span class="muted">(disabled first, at most ${SHOWN})</span></h2>
      ${
        subscriptions.length === 0
          ? html`<p class="muted">No subscriptions yet.</p>`
          : html`<table>
              <thead>
                <tr>
                  <th class="num">Id</th>
                  <th>Owner</th>
                  <th>URL</th>
                  <th>Events</th>
                  <th>State</th>
                  <th class="num">Failed attempts in a row</th>
                </tr>
              </thead>
              <tbody>
                ${rows}
              </tbody>
            </table>`
      }
    </section>`;
    return sendPage(reply, 200, page({ title: 'Webhooks', active: '/admin/webhooks', csrf }, body));
  });
}
