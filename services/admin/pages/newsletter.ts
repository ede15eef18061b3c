import type { FastifyInstance } from 'fastify';
import { adminStatsRepository } from '../../../shared/db/repositories/admin-stats.js';
import { html, page } from '../html.js';
import { sendPage, type AdminContext } from '../respond.js';

const FREQUENCIES = ['daily', 'weekly', 'monthly'] as const;
const STATES = ['pending', 'confirmed', 'unsubscribed', 'bouncing'] as const;

/** Subscriber counts by frequency and state, and the last 30 days of digest deliveries. Read-only. */
export async function newsletterPage(app: FastifyInstance, { deps, sessions }: AdminContext): Promise<void> {
  const { db } = deps.database;

  app.get('/admin/newsletter', async (request, reply) => {
    const stats = adminStatsRepository(db);
    const [byState, sends] = await Promise.all([stats.subscribersByState(), stats.digestSendsByStatus(30)]);
    const cell = (f: string, s: string) => byState.find((r) => r.frequency === f && r.status === s)?.n ?? 0;
    const rowTotal = (f: string) => STATES.reduce((t, s) => t + cell(f, s), 0);
    const colTotal = (s: string) => FREQUENCIES.reduce((t, f) => t + cell(f, s), 0);
    const total = FREQUENCIES.reduce((t, f) => t + rowTotal(f), 0);

    const body = html` <section class="card">
        <h2>Subscribers by frequency and state</h2>
        <table id="subscribers">
          <thead>
            <tr>
              <th>Frequency</th>
              ${STATES.map((s) => html`<th class="num">${s}</th>`)}
              <th class="num">total</th>
            </tr>
          </thead>
          <tbody>
            ${FREQUENCIES.map(
              (f) =>
                html`<tr>
                  <th>${f}</th>
                  ${STATES.map((s) => html`<td class="num" data-frequency="${f}" data-state="${s}">${cell(f, s)}</td>`)}
                  <td class="num">${rowTotal(f)}</td>
                </tr>`,
            )}
            <tr>
              <th>all</th>
              ${STATES.map((s) => html`<td class="num"><strong>${colTotal(s)}</strong></td>`)}
              <td class="num"><strong>${total}</strong></td>
            </tr>
          </tbody>
        </table>
        <p class="muted">
          Digests go to <em>confirmed</em> subscribers only; <em>bouncing</em> ones reached the bounce limit.
        </p>
      </section>
      <section class="card">
        <h2>Digests in the last 30 days</h2>
        ${
          sends.length === 0
            ? html`<p class="muted">None yet.</p>`
            : html`<table>
                <tbody>
                  ${sends.map(
                    (r) =>
                      html`<tr>
                        <th>${r.status}</th>
                        <td class="num">${r.n}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>`
        }
      </section>`;
    const csrf = sessions.csrfToken(request.adminSession!);
    return sendPage(reply, 200, page({ title: 'Newsletter', active: '/admin/newsletter', csrf }, body));
  });
}
