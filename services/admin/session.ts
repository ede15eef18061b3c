import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../shared/config.js';
import type { adminSessionsRepository } from '../../shared/db/repositories/admin-sessions.js';
import type { createSigner } from '../../shared/secrets.js';

type Signer = ReturnType<typeof createSigner>;
type SessionStore = ReturnType<typeof adminSessionsRepository>;

export const SESSION_COOKIE = 'agora_admin';
export const LOGIN_COOKIE = 'agora_admin_login';
/** An operator signs in again after this. */
export const SESSION_TTL_SECONDS = 12 * 3600;

export interface AdminSession {
  /** Random id: the CSRF token of this session is a signature over it. */
  sid: string;
  /** Unix seconds. */
  exp: number;
}

const sha256 = (text: string): Buffer => createHash('sha256').update(text).digest();
const rowId = (sid: string): string => sha256(`agora-admin-session\n${sid}`).toString('hex');

/**
 * Admin sessions: the cookie carries a random session id signed with the app secret (shared/secrets.ts) under
 * its own purpose, and the session lives only while its row in admin_sessions does. Logging out deletes the
 * row, "sign out everywhere" deletes them all, and a changed ADMIN_TOKEN ends every session made under the old
 * one (the row and the cookie both carry a fingerprint of the token, and start-up prunes stale rows), so a
 * stolen cookie stops working at once, not when it expires.
 * CSRF tokens are signatures over the session id (synchroniser token without server state); the login form
 * has its own token bound to a short-lived pre-login cookie, so a foreign site cannot log a browser in either.
 */
export function createAdminSessions(
  signer: Signer,
  adminToken: string,
  store: SessionStore,
  cookieSecure: Config['cookieSecure'],
) {
  const fingerprint = sha256(`agora-admin-token\n${adminToken}`).toString('base64url').slice(0, 22);
  const tokenHash = sha256(adminToken);

  const cookieOptions = (request: FastifyRequest, maxAge: number) => ({
    path: '/admin',
    httpOnly: true,
    sameSite: 'strict' as const,
    // Production sets Secure always (COOKIE_SECURE); elsewhere only over https (request.protocol is https
    // behind a TLS-terminating proxy only when TRUST_PROXY is set).
    secure: cookieSecure === 'auto' ? request.protocol === 'https' : cookieSecure,
    maxAge,
  });

  return {
    tokenMatches(given: unknown): boolean {
      if (typeof given !== 'string' || given.length === 0 || given.length > 4096) return false;
      return timingSafeEqual(sha256(given), tokenHash);
    },

    /** Removes expired sessions and those of a previous ADMIN_TOKEN; run at start-up and on each sign-in. */
    prune: () => store.prune(fingerprint),

    async start(request: FastifyRequest, reply: FastifyReply): Promise<AdminSession> {
      const session = {
        sid: randomBytes(18).toString('base64url'),
        exp: Math.floor(Date.now() / 1000) + SESSION_TTL_SECONDS,
      };
      await store.create({
        id: rowId(session.sid),
        tokenFingerprint: fingerprint,
        expiresAt: new Date(session.exp * 1000),
      });
      const value = signer.sign('admin-session', JSON.stringify({ ...session, fp: fingerprint }));
      reply.setCookie(SESSION_COOKIE, value, cookieOptions(request, SESSION_TTL_SECONDS));
      reply.clearCookie(LOGIN_COOKIE, cookieOptions(request, 0));
      return session;
    },

    async read(request: FastifyRequest): Promise<AdminSession | null> {
      const cookie = request.cookies[SESSION_COOKIE];
      if (!cookie) return null;
      const payload = signer.verify('admin-session', cookie);
      if (!payload) return null;
      let parsed: { sid?: unknown; exp?: unknown; fp?: unknown };
      try {
        parsed = JSON.parse(payload) as typeof parsed;
      } catch {
        return null;
      }
      if (typeof parsed.sid !== 'string' || typeof parsed.exp !== 'number' || parsed.fp !== fingerprint)
        return null;
      if (parsed.exp <= Date.now() / 1000) return null;
      if (!(await store.isLive(rowId(parsed.sid), fingerprint))) return null;
      return { sid: parsed.sid, exp: parsed.exp };
    },

    /** Ends this browser's session: its row goes, so a copy of the cookie is worthless too. */
    async end(request: FastifyRequest, reply: FastifyReply, session: AdminSession | null): Promise<void> {
      if (session) await store.delete(rowId(session.sid));
      reply.clearCookie(SESSION_COOKIE, cookieOptions(request, 0));
    },

    /** Ends every operator session, this one included; returns how many were ended. */
    async endAll(request: FastifyRequest, reply: FastifyReply): Promise<number> {
      const ended = await store.deleteAll();
      reply.clearCookie(SESSION_COOKIE, cookieOptions(request, 0));
      return ended;
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
