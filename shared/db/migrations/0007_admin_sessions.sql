-- Server-side admin sessions (services/admin/session.ts): the signed cookie names a row here, and a session
-- lives only while its row does, so logout, "sign out everywhere" and a changed ADMIN_TOKEN end sessions at once.
-- id is the SHA-256 of the random session id the cookie carries: this table alone cannot be replayed as cookies.
CREATE TABLE admin_sessions (
  id text PRIMARY KEY,
  token_fingerprint text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
--> statement-breakpoint
CREATE INDEX admin_sessions_expires_idx ON admin_sessions (expires_at);
