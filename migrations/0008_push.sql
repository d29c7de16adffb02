-- Push (issue 7): device tokens, per-app push settings, the outbox of messages to push, and where every user is
-- connected (so that only offline recipients are pushed).

-- A device's push token, bound to the session that registered it: it moves to its newest owner within the app
-- (a device that logs in as someone else must stop getting the previous user's pushes), and it is deleted when
-- its session ends (logout, displaced). Unique per app: one tenant's users cannot take another tenant's tokens.
CREATE TABLE push_tokens (
    app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    vendor text NOT NULL CHECK (vendor IN ('apns', 'apns_voip', 'fcm', 'hms')),
    token text NOT NULL,
    user_id text NOT NULL,
    session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    device_id text NOT NULL DEFAULT '',
    -- The app's bundle id as the device reports it; '' = the app's configured apns_bundle_id.
    bundle_id text NOT NULL DEFAULT '',
    environment text NOT NULL DEFAULT 'production' CHECK (environment IN ('sandbox', 'production')),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, vendor, token),
    FOREIGN KEY (app_id, user_id) REFERENCES users (app_id, id) ON DELETE CASCADE
);
CREATE INDEX push_tokens_by_user ON push_tokens (app_id, user_id);
CREATE INDEX push_tokens_by_session ON push_tokens (session_id);

-- How an app pushes. No row (or enabled = false): nothing is queued for the app's messages.
CREATE TABLE app_push_settings (
    app_id bigint PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
    enabled boolean NOT NULL DEFAULT false,
    apns_team_id text,
    apns_key_id text,
    -- The .p8 key (PEM), AES-256-GCM under PARLEY_MASTER_KEY (nonce || ciphertext || tag), associated data bound to
    -- the app's id, as app secrets are sealed.
    apns_private_key_ciphertext bytea,
    apns_bundle_id text,
    -- What an alert shows: the text (full), only who wrote (sender), or nothing of either (none).
    preview text NOT NULL DEFAULT 'full' CHECK (preview IN ('full', 'sender', 'none')),
    -- NULL: Apple's endpoint for each token's environment. Tests and proxies set an http(s) URL.
    apns_endpoint text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- The outbox: one row per stored message of an app with push enabled, written by the trigger below in the
-- message's own transaction (so no push is lost to a crash after the commit). Workers lease due rows, push, and
-- delete them; a crashed worker's lease expires and another instance takes the job over.
CREATE TABLE push_jobs (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id bigint NOT NULL,
    message_id bigint NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    leased_until timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX push_jobs_due ON push_jobs (next_attempt_at, id);

-- Tokens a job already pushed to: a retried job never pushes the same token twice.
CREATE TABLE push_deliveries (
    job_id bigint NOT NULL REFERENCES push_jobs (id) ON DELETE CASCADE,
    vendor text NOT NULL,
    token text NOT NULL,
    delivered_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, vendor, token)
);

-- One trigger per statement, not per row: a batch of sends (parley_send_messages) queues its jobs with one insert.
CREATE FUNCTION parley_queue_push_jobs() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO push_jobs (app_id, message_id)
    SELECT m.app_id, m.id FROM stored_messages m
    WHERE m.msg_type <> 'notify'
      AND EXISTS (SELECT 1 FROM app_push_settings s WHERE s.app_id = m.app_id AND s.enabled)
    ORDER BY m.id;
    RETURN NULL;
END;
$$;

CREATE TRIGGER messages_queue_push AFTER INSERT ON messages
REFERENCING NEW TABLE AS stored_messages
FOR EACH STATEMENT EXECUTE FUNCTION parley_queue_push_jobs();

-- Presence across instances. Every `parley serve` heartbeats its row; the WebSocket gateway records each open
-- connection (in batches, off the request path). Connections of an instance not seen for 15 seconds count as
-- gone (it crashed); rows of instances silent for a minute are deleted by the others.
CREATE TABLE realtime_instances (
    id text PRIMARY KEY,
    started_at timestamptz NOT NULL DEFAULT now(),
    last_seen timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE realtime_presence (
    instance_id text NOT NULL REFERENCES realtime_instances (id) ON DELETE CASCADE,
    connection_id bigint NOT NULL,
    app_id bigint NOT NULL,
    user_id text NOT NULL,
    session_id text NOT NULL,
    connected_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (instance_id, connection_id)
);
CREATE INDEX realtime_presence_by_user ON realtime_presence (app_id, user_id);
