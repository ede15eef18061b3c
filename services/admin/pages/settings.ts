import type { FastifyInstance } from 'fastify';
import {
  SETTING_DEFAULTS,
  settingsRepository,
  type SettingName,
} from '../../../shared/db/repositories/settings.js';
import { csrfField, html } from '../html.js';
import { formBody, formPage, type AdminContext } from '../respond.js';

/** What each operator setting does; a setting added to SETTING_DEFAULTS shows up here even without a line. */
const DESCRIPTIONS: Record<string, string> = {
  ai_enabled:
    'AI features at POST /api/ai.php (spam check, quality check, tag suggestions, chat). While off, ai.php answers 403.',
};

type SettingValue = boolean | number | string;

/** Parses a submitted value by the type of the setting's default; null when it does not fit. */
function parse(name: SettingName, raw: unknown): SettingValue | null {
  const fallback = SETTING_DEFAULTS[name] as unknown;
  if (typeof fallback === 'boolean') return raw === 'on' || raw === 'true' || raw === '1';
  if (typeof raw !== 'string') return null;
  if (typeof fallback === 'number') {
    const n = Number(raw);
    return raw.trim() !== '' && Number.isFinite(n) ? n : null;
  }
  return raw.length <= 10_000 ? raw : null;
}

export async function settingsPages(app: FastifyInstance, { deps, sessions }: AdminContext): Promise<void> {
  const settings = settingsRepository(deps.database.db);
  const { config } = deps;

  // The environment's part of the configuration, read-only here (it changes with a redeploy, not a click).
  const environment: [string, string][] = [
    ['Public URL (PUBLIC_URL)', config.publicUrl],
    ['Rate limits on (RATE_LIMIT_ENABLED)', String(config.rateLimits.enabled)],
    ['Anonymous plan', `${config.rateLimits.anonymous.hour}/h, ${config.rateLimits.anonymous.day}/day`],
    [
      'Authenticated plan',
      `${config.rateLimits.authenticated.hour}/h, ${config.rateLimits.authenticated.day}/day`,
    ],
    ['Premium plan', `${config.rateLimits.premium.hour}/h, ${config.rateLimits.premium.day}/day`],
    ['Verification keys', `${config.rateLimits.verify.hour}/h, ${config.rateLimits.verify.day}/day`],
    [
      'SMTP for newsletters (SMTP_URL)',
      config.smtpUrl ? 'configured' : 'not set: digests and confirmations cannot be sent',
    ],
    [
      'AI provider (AI_PROVIDER_URL)',
      config.ai.providerUrl ? new URL(config.ai.providerUrl).host : 'none (built-in models only)',
    ],
    ['Verification HELO name (VERIFY_HELO_NAME)', config.verify.heloName],
    ['Verification SMTP port (VERIFY_SMTP_PORT)', String(config.verify.smtpPort)],
    ['Queue prefix (QUEUE_PREFIX)', config.queuePrefix],
  ];

  const render = formPage(sessions, { title: 'Settings', active: '/admin/settings' }, async (csrf) => {
    const values = await settings.all();
    const names = Object.keys(SETTING_DEFAULTS) as SettingName[];
    const inputs = names.map((name) => {
      const value = values[name] as SettingValue;
      const id = `setting-${name}`;
      const control =
        typeof SETTING_DEFAULTS[name] === 'boolean'
          ? html`<label class="checks" for="${id}"
              ><input id="${id}" type="checkbox" name="${name}" ${value === true ? 'checked' : ''} />
              <code>${name}</code>
              <span class="pill ${value === true ? 'on' : 'off'}"
                >${value === true ? 'on' : 'off'}</span
              ></label
            >`
          : html`<label for="${id}"><code>${name}</code></label
              ><input
                id="${id}"
                type="${typeof value === 'number' ? 'number' : 'text'}"
                name="${name}"
                value="${String(value)}"
              />`;
      return html`<div class="field">
        ${control}<input type="hidden" name="_settings" value="${name}" />
        <div class="muted">${DESCRIPTIONS[name] ?? ''}</div>
      </div>`;
    });
    const body = html` <section class="card">
        <h2>Operator settings</h2>
        <p class="muted">Stored in the database; every process reads them, no restart needed.</p>
        <form method="post" action="/admin/settings">
          ${csrfField(csrf)}${inputs}<button type="submit">Save settings</button>
        </form>
      </section>
      <section class="card">
        <h2>Environment</h2>
        <p class="muted">
          Set by environment variables at deploy time (see docs/operations.md); shown read-only.
        </p>
        <table>
          <tbody>
            ${environment.map(
              ([k, v]) =>
                html`<tr>
                  <th>${k}</th>
                  <td>${v}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </section>`;
    return body;
  });

  app.get('/admin/settings', async (request, reply) => render(request, reply, 200));

  app.post('/admin/settings', async (request, reply) => {
    const body = formBody(request);
    const submitted = (Array.isArray(body._settings) ? body._settings : [body._settings]).filter(
      // Own names only: `in` would also accept constructor, toString, __proto__… and store them as settings.
      (n): n is SettingName => typeof n === 'string' && Object.hasOwn(SETTING_DEFAULTS, n),
    );
    const changes: [SettingName, SettingValue][] = [];
    for (const name of new Set(submitted)) {
      const value = parse(name, body[name]);
      if (value === null)
        return render(request, reply, 400, { kind: 'error', text: `${name}: not a valid value.` });
      changes.push([name, value]);
    }
    const repository = settings as unknown as { set(name: SettingName, value: SettingValue): Promise<void> };
    for (const [name, value] of changes) await repository.set(name, value);
    request.log.info({ settings: Object.fromEntries(changes) }, 'admin changed settings');
    const summary = changes.map(([n, v]) => `${n} = ${String(v)}`).join(', ');
    return render(request, reply, 200, { kind: 'ok', text: `Saved: ${summary || 'nothing to change'}.` });
  });
}
