import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { createSigner } from '../../shared/secrets.js';

type Signer = ReturnType<typeof createSigner>;

export const SESSION_COOKIE = 'agora_admin';
export const LOGIN_COOKIE = 'agora_admin_login';
/** An operator signs in again after this; there is no server-side session store to prune. */
export const SESSION_TTL_SECONDS = 12 * 3600;

export interface AdminSession {
  /** Random id: the CSRF token of this session is a signature over it. */
  sid: string;
  /** Unix seconds. */
  exp: number;
}

const sha256 = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * Stateless admin sessions: the cookie is the session, signed with the app secret (shared/secrets.ts) under
 * its own purpose. It also carries a fingerprint of ADMIN_TOKEN, so rotating the token logs everybody out.
 * CSRF tokens are signatures over the session id (synchroniser token without server state); the login form
 * has its own token bound to a short-lived pre-login cookie, so a foreign site cannot log a browser in either.
 */
export function createAdminSessions(signer: Signer, adminToken: string) {
  const fingerprint = sha256(`agora-admin-token\n${adminToken}`).toString('base64url').slice(0, 22);
  const tokenHash = sha256(adminToken);

  const cookieOptions = (request: FastifyRequest, maxAge: number) => ({
    path: '/admin',
    httpOnly: true,
    sameSite: 'strict' as const,
    // Behind a TLS-terminating proxy request.protocol is https only when TRUST_PROXY is set.
    secure: request.protocol === 'https',
    maxAge,
  });

  return {
    tokenMatches(given: unknown): boolean {
      if (typeof given !== 'string' || given.length === 0 || given.length > 4096) return false;
      return timingSafeEqual(sha256(given), tokenHash);
    },

    start(request: FastifyRequest, reply: FastifyReply): AdminSession {
      const session = {
        sid: randomBytes(18).toString('base64url'),
        exp: Math.floor(Date.now() / 1000) + SESSION_TTL_SECONDS,
      };
      const value = signer.sign('admin-session', JSON.stringify({ ...session, fp: fingerprint }));
      reply.setCookie(SESSION_COOKIE, value, cookieOptions(request, SESSION_TTL_SECONDS));
      reply.clearCookie(LOGIN_COOKIE, { path: '/admin' });
      return session;
    },

    read(request: FastifyRequest): AdminSession | null {
      const cookie = request.cookies[SESSION_COOKIE];
      if (!cookie) return null;
      const payload = signer.verify('admin-session', cookie);
      if (!payload) return null;
      try {
        const parsed = JSON.parse(payload) as { sid?: unknown; exp?: unknown; fp?: unknown };
        if (typeof parsed.sid !== 'string' || typeof parsed.exp !== 'number' || parsed.fp !== fingerprint)
          return null;
        if (parsed.exp <= Date.now() / 1000) return null;
        return { sid: parsed.sid, exp: parsed.exp };
      } catch {
        return null;
      }
    },

    end(reply: FastifyReply): void {
      reply.clearCookie(SESSION_COOKIE, { path: '/admin' });
    },

    csrfToken: (session: AdminSession): string => signer.sign('admin-csrf', session.sid),

    csrfValid: (session: AdminSession, given: unknown): boolean =>
      typeof given === 'string' && signer.verify('admin-csrf', given) === session.sid,

    /** A fresh pre-login nonce in a cookie, and the form token that must come back with it. */
    loginToken(request: FastifyRequest, reply: FastifyReply): string {
      const nonce = randomBytes(18).toString('base64url');
      reply.setCookie(LOGIN_COOKIE, nonce, cookieOptions(request, 3600));
      return signer.sign('admin-login', nonce);
    },

    loginTokenValid(request: FastifyRequest, given: unknown): boolean {
      const nonce = request.cookies[LOGIN_COOKIE];
      return typeof given === 'string' && !!nonce && signer.verify('admin-login', given) === nonce;
    },
  };
}

export type AdminSessions = ReturnType<typeof createAdminSessions>;
