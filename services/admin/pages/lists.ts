import type { FastifyInstance } from 'fastify';
import { pageOfLists } from '../../../shared/db/repositories/verification-lists.js';
import { createListBudget } from '../../../shared/lists/budget.js';
import { endList } from '../../../shared/lists/end.js';
import { LIST_ID_PATTERN } from '../../../shared/lists/ids.js';
import { toListView } from '../../../shared/lists/view.js';
import { csrfField, html } from '../html.js';
import { formPage, type AdminContext } from '../respond.js';

const PER_PAGE = 50;
const ACTIVE = new Set(['queued', 'running']);

/**
 * Verification lists of every owner, newest first: size, progress, counts; a queued or running list can be
 * cancelled (the owner's unverified addresses are refunded, as DELETE /lists/{id} does). Names are user content.
 */
export async function listsPage(app: FastifyInstance, { deps, sessions }: AdminContext): Promise<void> {
  const budget = createListBudget(deps.redis, deps.config);
  const endDeps = { database: deps.database, queues: deps.queues, budget, logger: deps.logger };

  const render = formPage(sessions, { title: 'Verification lists', active: '/admin/lists' }, async (csrf) => {
    const { lists, total } = await pageOfLists(deps.database.db, null, { limit: PER_PAGE, offset: 0 });
    const rows = lists.map((record) => {
      const l = toListView(record, null);
      return html`<tr>
        <td><code>${l.id}</code><br />${l.name || html`<span class="muted">—</span>`}</td>
        <td>${record.username}</td>
        <td class="num">${l.total}<br /><span class="muted">${l.unique} distinct</span></td>
        <td>
          <progress max="100" value="${l.progress}" aria-label="Progress of list ${l.id}"></progress>
          ${l.progress}%
          ${l.eta_seconds === null ? '' : html`<br /><span class="muted">about ${l.eta_seconds} s left</span>`}
        </td>
        <td class="num">${l.counts.valid} / ${l.counts.invalid} / ${l.counts.risky} / ${l.counts.unknown}</td>
        <td>
          <span class="pill ${l.status === 'failed' ? 'bad' : ACTIVE.has(l.status) ? 'on' : 'off'}"
            >${l.status}</span
          >
        </td>
        <td>${l.created_at.slice(0, 16).replace('T', ' ')}</td>
        <td>
          ${
            ACTIVE.has(l.status)
              ? html`<form method="post" action="/admin/lists/${l.id}/cancel">
                  ${csrfField(csrf)}<button class="danger" type="submit" aria-label="Cancel list ${l.id}">
                    Cancel
                  </button>
                </form>`
              : ''
          }
        </td>
      </tr>`;
    });
    const body = html`<section class="card">
      <h2>
        Verification lists
        <span class="muted">(${total}${total > PER_PAGE ? `, newest ${PER_PAGE}` : ''})</span>
      </h2>
      ${
        lists.length === 0
          ? html`<p class="muted">No lists yet.</p>`
          : html`<table>
              <thead>
                <tr>
                  <th>List</th>
                  <th>Owner</th>
                  <th class="num">Rows</th>
                  <th>Progress</th>
                  <th class="num">valid / invalid / risky / unknown</th>
                  <th>Status</th>
                  <th>Created (UTC)</th>
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

  app.get('/admin/lists', async (request, reply) => render(request, reply, 200));

  app.post<{ Params: { id: string } }>('/admin/lists/:id/cancel', async (request, reply) => {
    const id = request.params.id;
    const cancelled = LIST_ID_PATTERN.test(id) && (await endList(endDeps, id, 'cancelled'));
    if (cancelled) request.log.info({ listId: id }, 'admin cancelled a verification list');
    return render(
      request,
      reply,
      cancelled ? 200 : 404,
      cancelled
        ? { kind: 'ok', text: `List ${id} cancelled; its unverified addresses were refunded.` }
        : { kind: 'error', text: `List ${id} is unknown or has already ended.` },
    );
  });
}
