import type { LightMyRequestResponse } from 'fastify';

/**
 * A browser's cookies for tests of the admin panel: what Set-Cookie gave, minus what it cleared. Takes the
 * answers of app.inject() and of fetch() alike.
 */
export class CookieJar {
  readonly cookies = new Map<string, string>();

  take(response: Response | LightMyRequestResponse): this {
    for (const { name, value, cleared } of setCookies(response)) {
      if (cleared) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return this;
  }

  get header(): Record<string, string> {
    return this.cookies.size === 0
      ? {}
      : { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
  }
}

function setCookies(response: Response | LightMyRequestResponse) {
  if (response instanceof Response) {
    return response.headers.getSetCookie().map((line) => {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const value = pair.slice(eq + 1).trim();
      const expired = /max-age=0\b/i.test(line) || /expires=Thu, 01 Jan 1970/i.test(line);
      return { name: pair.slice(0, eq).trim(), value, cleared: expired || value === '' };
    });
  }
  return response.cookies.map((c) => {
    const expired = c.maxAge === 0 || (c.expires !== undefined && c.expires.getTime() <= Date.now());
    return { name: c.name, value: c.value, cleared: expired || c.value === '' };
  });
}

/** The CSRF token of the first form of an admin page. */
export const csrfOf = (html: string): string => {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error(`no CSRF field in:\n${html.slice(0, 500)}`);
  return match[1]!;
};
