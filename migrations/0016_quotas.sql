-- Quotas (issue 18, item 9): storage per user and per app, and registrations per client address.

-- Bytes stored, kept as counters by triggers so that every path that adds or removes rows (uploads, the sweeper,
-- an app's deletion) keeps them exact in its own transaction, and a quota check reads one row instead of summing.
-- Per user: the files the user uploaded (each upload counts, even when its content is shared). Per app: its blobs
-- (each distinct content once).
CREATE TABLE file_user_usage (
    app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    user_id text NOT NULL,
    bytes bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (app_id, user_id)
);

CREATE TABLE file_app_usage (
    app_id bigint PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
    bytes bigint NOT NULL DEFAULT 0
);

-- Per-app overrides of PARLEY_FILES_USER_QUOTA_BYTES and PARLEY_FILES_APP_QUOTA_BYTES; NULL = the server's, 0 = none.
ALTER TABLE app_file_settings
    ADD COLUMN user_quota_bytes bigint CHECK (user_quota_bytes >= 0),
    ADD COLUMN app_quota_bytes bigint CHECK (app_quota_bytes >= 0);

-- Rows are locked in key order, so a statement that changes several users' counters (the sweeper's) never
-- deadlocks with another one.
CREATE FUNCTION parley_file_usage_added() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO file_user_usage AS u (app_id, user_id, bytes)
    SELECT app_id, owner_id, sum(size) FROM added GROUP BY app_id, owner_id ORDER BY app_id, owner_id
    ON CONFLICT (app_id, user_id) DO UPDATE SET bytes = u.bytes + EXCLUDED.bytes;
    RETURN NULL;
END $$;

CREATE FUNCTION parley_file_usage_removed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM file_user_usage u
    WHERE (u.app_id, u.user_id) IN (SELECT app_id, owner_id FROM removed)
    ORDER BY u.app_id, u.user_id FOR UPDATE;
    UPDATE file_user_usage u SET bytes = greatest(0, u.bytes - r.bytes)
    FROM (SELECT app_id, owner_id, sum(size) AS bytes FROM removed GROUP BY app_id, owner_id) r
    WHERE u.app_id = r.app_id AND u.user_id = r.owner_id;
    RETURN NULL;
END $$;

CREATE FUNCTION parley_blob_usage_added() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO file_app_usage AS u (app_id, bytes)
    SELECT app_id, sum(size) FROM added GROUP BY app_id ORDER BY app_id
    ON CONFLICT (app_id) DO UPDATE SET bytes = u.bytes + EXCLUDED.bytes;
    RETURN NULL;
END $$;

CREATE FUNCTION parley_blob_usage_removed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM file_app_usage u WHERE u.app_id IN (SELECT app_id FROM removed) ORDER BY u.app_id FOR UPDATE;
    UPDATE file_app_usage u SET bytes = greatest(0, u.bytes - r.bytes)
    FROM (SELECT app_id, sum(size) AS bytes FROM removed GROUP BY app_id) r
    WHERE u.app_id = r.app_id;
    RETURN NULL;
END $$;

-- Statement-level with transition tables: the sweeper's one DELETE of many rows updates each counter once. An
-- INSERT ... ON CONFLICT DO UPDATE that reuses a blob puts nothing in the INSERT's transition table.
CREATE TRIGGER files_usage_added AFTER INSERT ON files
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION parley_file_usage_added();
CREATE TRIGGER files_usage_removed AFTER DELETE ON files
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION parley_file_usage_removed();
CREATE TRIGGER file_blobs_usage_added AFTER INSERT ON file_blobs
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION parley_blob_usage_added();
CREATE TRIGGER file_blobs_usage_removed AFTER DELETE ON file_blobs
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION parley_blob_usage_removed();

-- What is stored already.
INSERT INTO file_user_usage (app_id, user_id, bytes)
SELECT app_id, owner_id, sum(size) FROM files GROUP BY app_id, owner_id;
INSERT INTO file_app_usage (app_id, bytes)
SELECT app_id, sum(size) FROM file_blobs GROUP BY app_id;

-- Registrations per client address (IPv6 by /64) and app: a token bucket of `per_hour` tokens refilled evenly
-- over the hour, in PostgreSQL so that it holds across instances. A bucket untouched for an hour is full again:
-- the housekeeping purge drops it.
CREATE TABLE registration_throttles (
    app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    source text NOT NULL,
    tokens double precision NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, source)
);
CREATE INDEX registration_throttles_updated_at ON registration_throttles (updated_at);

-- Takes a token: 0 when the registration may go ahead, otherwise the seconds until a token is back (nothing taken).
CREATE FUNCTION parley_registration_attempt(p_app bigint, p_source text, p_per_hour integer)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    rate double precision := p_per_hour / 3600.0;
    available double precision;
    -- The clock, not now(): see parley_login_attempt (migrations/0014).
    moment timestamptz;
BEGIN
    INSERT INTO registration_throttles (app_id, source, tokens, updated_at)
    VALUES (p_app, p_source, p_per_hour, clock_timestamp())
    ON CONFLICT DO NOTHING;
    SELECT tokens, updated_at INTO available, moment FROM registration_throttles
    WHERE app_id = p_app AND source = p_source FOR UPDATE;
    available := least(p_per_hour, available + greatest(0, extract(epoch FROM clock_timestamp() - moment)) * rate);
    moment := clock_timestamp();
    IF available >= 1 THEN
        UPDATE registration_throttles SET tokens = available - 1, updated_at = moment
        WHERE app_id = p_app AND source = p_source;
        RETURN 0;
    END IF;
    UPDATE registration_throttles SET tokens = available, updated_at = moment
    WHERE app_id = p_app AND source = p_source;
    RETURN greatest(1, ceil((1 - available) / rate))::integer;
END $$;
