/**
 * Server-rendered HTML for the admin panel: tagged template literals that escape every interpolated value
 * unless it is already `Html` (built by this tag). Forgetting to escape is then impossible by construction.
 */
import { escapeHtml } from '../../shared/html-escape.js';

export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return new Html(out);
}

export const NAV = [
  ['/admin', 'Overview'],
  ['/admin/keys', 'API keys'],
  ['/admin/settings', 'Settings'],
  ['/admin/newsletter', 'Newsletter'],
  ['/admin/lists', 'Lists'],
  ['/admin/webhooks', 'Webhooks'],
  ['/admin/queues', 'Queues'],
] as const;

const CSS = `
:root{--fg:#1d2330;--muted:#5f6b7a;--line:#dde2e8;--bg:#f5f7fa;--card:#fff;--accent:#2457c5;--danger:#b42318;--ok:#067647}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{background:#17213a;color:#fff;padding:0 24px;display:flex;align-items:center;gap:24px;height:52px}
header .brand{font-weight:650;letter-spacing:.2px}
header nav{display:flex;gap:4px;flex:1}
header nav a{color:#c9d3e6;text-decoration:none;padding:6px 10px;border-radius:6px}
header nav a.active,header nav a:hover{background:#2a3657;color:#fff}
header form{margin:0}
main{max-width:1080px;margin:24px auto;padding:0 24px}
h1{font-size:22px;margin:0 0 16px}
h2{font-size:17px;margin:0 0 12px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:18px 20px;margin-bottom:18px}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(180px,1fr));gap:14px}
.stat{font-size:26px;font-weight:650}
.muted{color:var(--muted)}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:7px 8px;border-bottom:1px solid var(--line);vertical-align:middle}
th{font-size:13px;color:var(--muted);font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
code{font:13px ui-monospace,SFMono-Regular,Menlo,monospace;background:#eef1f5;padding:1px 5px;border-radius:4px}
label,.label{display:block;font-weight:600;margin:0 0 4px}
.field{margin-bottom:12px}
.row{display:flex;gap:14px;flex-wrap:wrap;align-items:flex-end}
.row .field{flex:1;min-width:160px}
input[type=text],input[type=password],input[type=number],select{width:100%;padding:7px 9px;border:1px solid #c5ccd6;border-radius:6px;font:inherit;background:#fff}
.checks label{display:inline-flex;gap:6px;align-items:center;font-weight:400;margin-right:14px}
button{font:inherit;padding:7px 14px;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer}
button.secondary{background:#fff;color:var(--accent)}
button.danger{background:#fff;color:var(--danger);border-color:#e4a7a1;padding:4px 10px;font-size:13px}
header button{background:transparent;border-color:#4a5a80;color:#c9d3e6;padding:4px 10px}
.flash{padding:12px 14px;border-radius:8px;margin-bottom:18px;border:1px solid}
.flash.ok{background:#ecfdf3;border-color:#a6e3bd;color:#05603a}
.flash.error{background:#fef3f2;border-color:#f5b5ae;color:var(--danger)}
.secret{display:block;font-size:15px;padding:10px 12px;margin:8px 0;user-select:all;word-break:break-all;background:#fff;border:1px dashed #7a93c9}
.pill{display:inline-block;padding:1px 8px;border-radius:999px;font-size:12px;font-weight:600}
.pill.on{background:#dcfae6;color:var(--ok)}.pill.off{background:#f2f4f7;color:var(--muted)}.pill.bad{background:#fee4e2;color:var(--danger)}
.login{max-width:380px;margin:12vh auto}
`;

export interface PageOptions {
  title: string;
  /** Path of the active navigation entry; absent on the login page (no navigation). */
  active?: string;
  /** The CSRF token for the logout form in the header. */
  csrf?: string;
  flash?: { kind: 'ok' | 'error'; text: string | Html };
}

export function page(options: PageOptions, body: Html): string {
  const nav = options.active
    ? html`<nav>
          ${NAV.map(([href, label]) => html`<a href="${href}" class="${href === options.active ? 'active' : ''}">${label}</a>`)}
        </nav>
        <form method="post" action="/admin/logout">
          <input type="hidden" name="_csrf" value="${options.csrf}" /><button type="submit">Log out</button>
        </form>
        <form method="post" action="/admin/logout-everywhere">
          <input type="hidden" name="_csrf" value="${options.csrf}" /><button type="submit">
            Sign out everywhere
          </button>
        </form>`
    : html`<nav></nav>`;
  const flash = options.flash
    ? html`<div class="flash ${options.flash.kind}" role="status">${options.flash.text}</div>`
    : '';
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width,initial-scale=1" />
        <title>${options.title} · Agora admin</title>
        <style>
          ${new Html(CSS)}
        </style>
      </head>
      <body>
        <header><span class="brand">Agora admin</span>${nav}</header>
        <main>
          <h1>${options.title}</h1>
          ${flash} ${body}
        </main>
      </body>
    </html> `.value;
}

export const csrfField = (token: string): Html => html`<input type="hidden" name="_csrf" value="${token}" />`;

export const formatDate = (date: Date | null | undefined): string =>
  date ? date.toISOString().replace('T', ' ').slice(0, 16) + ' UTC' : '—';
