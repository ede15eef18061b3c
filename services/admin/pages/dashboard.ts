import type { FastifyInstance } from 'fastify';
import { QUEUE_NAMES } from '../../../shared/queues/names.js';
import { settingsRepository } from '../../../shared/db/repositories/settings.js';
import { adminStatsRepository } from '../../../shared/db/repositories/admin-stats.js';
import { html, page } from '../html.js';
import { sendPage, type AdminContext } from '../respond.js';

// The overview must render even when Redis is slow: queue counts are then shown as unavailable.
const QUEUE_COUNTS_TIMEOUT_MS = 2000;

async function queueCounts(deps: AdminContext['deps']) {
  const read = Promise.all(
    QUEUE_NAMES.map(
      async (name) =>
        [name, await deps.queues.queue(name).getJobCounts('waiting', 'active', 'delayed', 'failed')] as const,
    ),
  );
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>(
    (resolve) => (timer = setTimeout(() => resolve(null), QUEUE_COUNTS_TIMEOUT_MS)),
  );
  try {
    return await Promise.race([read, late]);
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

export async function dashboardPage(app: FastifyInstance, { deps, sessions }: AdminContext): Promise<void> {
  const { db } = deps.database;

  app.get('/admin', async (request, reply) => {
    const stats = adminStatsRepository(db);
    const [keys, subs, ai, queues] = await Promise.all([
      stats.activeKeys(),
      stats.subscribers(),
      settingsRepository(db).get('ai_enabled'),
      queueCounts(deps),
    ]);
    const body = html` <div class="grid">
        <a class="card" href="/admin/keys" style="text-decoration:none;color:inherit"
          ><div class="muted">Active API keys</div>
          <div class="stat">${keys}</div></a
        >
        <a class="card" href="/admin/settings" style="text-decoration:none;color:inherit"
          ><div class="muted">AI features</div>
          <div class="stat"><span class="pill ${ai ? 'on' : 'off'}">${ai ? 'on' : 'off'}</span></div></a
        >
        <a class="card" href="/admin/newsletter" style="text-decoration:none;color:inherit"
          ><div class="muted">Newsletter subscribers</div>
          <div class="stat">${subs}</div></a
        >
      </div>
      <section class="card">
        <h2>Queues</h2>
        ${
          queues
            ? html`<table>
                <thead>
                  <tr>
                    <th>Queue</th>
                    <th class="num">waiting</th>
                    <th class="num">active</th>
                    <th class="num">delayed</th>
                    <th class="num">failed</th>
                  </tr>
                </thead>
                <tbody>
                  ${queues.map(
                    ([name, c]) =>
                      html`<tr>
                        <td><a href="/admin/queues/queue/${name}">${name}</a></td>
                        <td class="num">${c.waiting ?? 0}</td>
                        <td class="num">${c.active ?? 0}</td>
                        <td class="num">${c.delayed ?? 0}</td>
                        <td class="num">${c.failed ?? 0}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>`
            : html`<p class="muted">Redis did not answer in time.</p>`
        }
        <p><a href="/admin/queues">Open the queue board</a> to inspect, retry or clean jobs.</p>
      </section>`;
    return sendPage(
      reply,
      200,
      page({ title: 'Overview', active: '/admin', csrf: sessions.csrfToken(request.adminSession!) }, body),
    );
  });
}
