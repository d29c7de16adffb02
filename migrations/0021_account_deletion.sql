-- Account deletion (issue 19, DELETE /api/users/me): a deleted account's sessions end with their own reason, so
-- its sockets are told why (session_ended {reason: deleted}, close 4501).
ALTER TABLE sessions DROP CONSTRAINT sessions_end_reason_check;
ALTER TABLE sessions ADD CONSTRAINT sessions_end_reason_check
    CHECK (end_reason IN ('logout', 'revoked', 'account_conflict', 'relogin', 'token_reuse', 'banned', 'deleted'));

-- The sweep that frees deleted accounts' usernames after PARLEY_AUTH_USERNAME_GRACE_DAYS reads only these rows.
CREATE INDEX users_deleted_username ON users (deleted_at) WHERE deleted_at IS NOT NULL AND username IS NOT NULL;
