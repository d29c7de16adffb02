-- Issue 21: APNs certificate authentication and the push attempts log. (Per-message push options need no schema:
-- they are stored in `messages.push_options`, migration 0024.)

-- APNs certificate-based authentication, one certificate per environment (Apple issues sandbox and production
-- certificates apart). `parley app push` takes the client certificate and its private key out of the app's .p12
-- and stores them as PEM, AES-256-GCM under PARLEY_MASTER_KEY as the .p8 key is, the associated data naming the app
-- and the environment; the .p12 password is used once and never stored. Nullable without defaults: no rewrite.
ALTER TABLE app_push_settings
    ADD COLUMN apns_certificate_sandbox_ciphertext bytea,
    ADD COLUMN apns_certificate_production_ciphertext bytea;

-- Every attempt the push worker makes to a vendor, with the vendor's answer, for the app's troubleshooting console
-- (`GET /api/admin/users/{userId}/push-attempts`). Only the last 50 per user are kept (the trigger below). The token
-- is never stored whole: its last 8 characters tell a user's devices apart.
CREATE TABLE push_attempts (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    user_id text NOT NULL,
    -- NULL for pushes that are not about one message (a call's cancel push).
    message_id bigint,
    vendor text NOT NULL,
    token_suffix text NOT NULL,
    -- alert, voip, ... as the sender was asked to send it.
    kind text NOT NULL,
    -- The vendor's HTTP status; NULL when no answer came (timeout, connection refused).
    status integer,
    -- The vendor's reason (APNs' `reason`, an FCM error status) or the transport error.
    reason text,
    -- The vendor's id of the notification (APNs' `apns-id`), when it gave one.
    vendor_id text,
    outcome text NOT NULL CHECK (outcome IN ('delivered', 'invalid_token', 'retry', 'rejected')),
    at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX push_attempts_user ON push_attempts (app_id, user_id, id DESC);

-- Keeps the last 50 attempts of each user an insert touched, in the inserting statement (a worker records a job's
-- attempts in one statement, so this runs once per job, on the index).
CREATE FUNCTION parley_trim_push_attempts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM push_attempts p
    USING (SELECT DISTINCT app_id, user_id FROM new_attempts) u
    WHERE p.app_id = u.app_id AND p.user_id = u.user_id
      AND p.id < (SELECT q.id FROM push_attempts q WHERE q.app_id = u.app_id AND q.user_id = u.user_id
                  ORDER BY q.id DESC OFFSET 49 LIMIT 1);
    RETURN NULL;
END;
$$;

CREATE TRIGGER push_attempts_trim AFTER INSERT ON push_attempts
REFERENCING NEW TABLE AS new_attempts
FOR EACH STATEMENT EXECUTE FUNCTION parley_trim_push_attempts();
