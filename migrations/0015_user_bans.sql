-- Banned accounts keep their data but cannot sign in: a ban ends every session (end_reason 'banned', close 4501 on
-- their sockets) and refuses password and signed logins (1043) until it is lifted.
ALTER TABLE users ADD COLUMN banned_at timestamptz;

ALTER TABLE sessions DROP CONSTRAINT sessions_end_reason_check;
ALTER TABLE sessions ADD CONSTRAINT sessions_end_reason_check
    CHECK (end_reason IN ('logout', 'revoked', 'account_conflict', 'relogin', 'token_reuse', 'banned'));
