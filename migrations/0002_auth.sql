-- Auth and tenancy: apps (tenants), users, device sessions, refresh tokens, failed logins, request nonces.
--
-- Tenant isolation: every table carries app_id and every query filters by it; users are keyed by
-- (app_id, id), so later features reference a user as (app_id, user_id).

CREATE TABLE apps (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_key text NOT NULL UNIQUE,
    name text NOT NULL,
    -- AES-256-GCM under PARLEY_MASTER_KEY (nonce || ciphertext || tag), associated data = the app key.
    secret_ciphertext bytea NOT NULL,
    -- After a rotation the previous secret keeps verifying signatures until previous_secret_expires_at.
    previous_secret_ciphertext bytea,
    previous_secret_expires_at timestamptz,
    privacy_version integer NOT NULL DEFAULT 0 CHECK (privacy_version >= 0),
    session_policy text NOT NULL DEFAULT 'one_per_platform'
        CHECK (session_policy IN ('one_per_platform', 'single', 'unlimited')),
    -- NULL: the server-wide default.
    access_token_ttl_seconds integer CHECK (access_token_ttl_seconds > 0),
    refresh_token_ttl_seconds integer CHECK (refresh_token_ttl_seconds > 0),
    im_token_ttl_seconds integer CHECK (im_token_ttl_seconds > 0),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
-- Servers poll for changed apps (a missed NOTIFY costs at most one poll interval).
CREATE INDEX apps_updated_at ON apps (updated_at);

CREATE TABLE users (
    app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    -- Generated (`u_...`) for built-in accounts; the app's own id for users created by a signed login.
    id text NOT NULL CHECK (id ~ '^[A-Za-z0-9_.@-]{1,64}$'),
    -- Built-in accounts only, stored lower-cased; NULL for external users.
    username text,
    password_hash text,
    nickname text NOT NULL DEFAULT '',
    avatar text,
    privacy_version_consented integer NOT NULL DEFAULT 0,
    consented_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, id)
);
CREATE UNIQUE INDEX users_app_username ON users (app_id, username) WHERE username IS NOT NULL;

CREATE TABLE sessions (
    id text PRIMARY KEY,
    app_id bigint NOT NULL,
    user_id text NOT NULL,
    platform text NOT NULL,
    device_id text NOT NULL DEFAULT '',
    device_model text NOT NULL DEFAULT '',
    ip_address text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    ended_at timestamptz,
    end_reason text CHECK (end_reason IN ('logout', 'revoked', 'account_conflict', 'relogin', 'token_reuse')),
    -- For account_conflict: the model of the device whose login displaced this session.
    ended_by_device_model text,
    FOREIGN KEY (app_id, user_id) REFERENCES users (app_id, id) ON DELETE CASCADE
);
CREATE INDEX sessions_active_by_user ON sessions (app_id, user_id) WHERE ended_at IS NULL;
-- Every server loads and polls recently ended sessions to refuse their tokens.
CREATE INDEX sessions_ended_at ON sessions (ended_at) WHERE ended_at IS NOT NULL;

-- Every refresh token a session was given, current and used, kept until it expires: presenting a used one is
-- how theft is detected.
CREATE TABLE refresh_tokens (
    token_hash bytea PRIMARY KEY,  -- SHA-256 of the token; the token itself is never stored
    app_id bigint NOT NULL,
    session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at timestamptz
);
CREATE INDEX refresh_tokens_session ON refresh_tokens (session_id);
CREATE INDEX refresh_tokens_expires_at ON refresh_tokens (expires_at);

-- Failed logins per account name (existing or not, so that the answer never tells them apart).
CREATE TABLE login_failures (
    app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    username text NOT NULL,
    failed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX login_failures_account ON login_failures (app_id, username, failed_at);

-- Nonces of signed server-to-server requests: the primary key makes a replay a unique violation.
CREATE TABLE request_nonces (
    app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    nonce text NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, nonce)
);
CREATE INDEX request_nonces_expires_at ON request_nonces (expires_at);
