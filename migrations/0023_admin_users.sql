-- The admin API for users, online state and statistics (issue 20). Statistics are counters kept as things happen,
-- never scans: GET /api/admin/stats reads a handful of rows.

-- A session the app's backend ended (POST /api/admin/users/{userId}/logout) says so.
ALTER TABLE sessions DROP CONSTRAINT sessions_end_reason_check;
ALTER TABLE sessions ADD CONSTRAINT sessions_end_reason_check
    CHECK (end_reason IN ('logout', 'revoked', 'account_conflict', 'relogin', 'token_reuse', 'banned', 'deleted',
                          'forced_logout'));

-- Live (not deleted) users per app, kept by triggers on users in the writing transaction. Registrations and first
-- signed logins take the app's row lock for the rest of their (short) transaction; sends never touch it.
CREATE TABLE app_counters (
    app_id bigint PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
    users bigint NOT NULL DEFAULT 0
);

CREATE FUNCTION parley_users_added() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO app_counters AS c (app_id, users)
    SELECT app_id, count(*) FROM added WHERE deleted_at IS NULL GROUP BY app_id ORDER BY app_id
    ON CONFLICT (app_id) DO UPDATE SET users = c.users + EXCLUDED.users;
    RETURN NULL;
END $$;

-- A plain UPDATE, never an insert: when the app itself is being deleted its counter row may already be gone.
CREATE FUNCTION parley_users_removed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE app_counters c SET users = greatest(0, c.users - r.users)
    FROM (SELECT app_id, count(*) AS users FROM removed WHERE deleted_at IS NULL GROUP BY app_id) r
    WHERE c.app_id = r.app_id;
    RETURN NULL;
END $$;

CREATE FUNCTION parley_user_deleted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE app_counters SET users = greatest(0, users - 1) WHERE app_id = NEW.app_id;
    RETURN NULL;
END $$;

CREATE TRIGGER users_count_added AFTER INSERT ON users
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION parley_users_added();
CREATE TRIGGER users_count_removed AFTER DELETE ON users
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION parley_users_removed();
-- Row-level with a WHEN clause (transition tables cannot go with a column list): other updates of users cost
-- nothing, an account deletion one counter update.
CREATE TRIGGER users_count_deleted AFTER UPDATE OF deleted_at ON users
    FOR EACH ROW WHEN (OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL)
    EXECUTE FUNCTION parley_user_deleted();

INSERT INTO app_counters (app_id, users)
SELECT a.id, (SELECT count(*) FROM users u WHERE u.app_id = a.id AND u.deleted_at IS NULL) FROM apps a;

-- Per app and UTC day: distinct active users and stored messages. Each instance counts in memory and adds its
-- counts here every few seconds (PARLEY_STATS_FLUSH_SECONDS), so no send transaction touches a shared row.
CREATE TABLE app_daily_counters (
    app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    day date NOT NULL,
    active_users bigint NOT NULL DEFAULT 0,
    messages bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (app_id, day)
);

-- Who was active on a day (only while the day can still be counted): an instance's flush inserts its users with
-- ON CONFLICT DO NOTHING and adds the rows it inserted to active_users, so a user active on several instances counts
-- once. Keyed by day first: the flush drops past days by a range of the key.
CREATE TABLE app_daily_active_users (
    day date NOT NULL,
    app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    user_id text NOT NULL,
    PRIMARY KEY (day, app_id, user_id)
);

-- Files stored per app: the number of distinct contents beside their bytes (migrations/0016 keeps the bytes).
ALTER TABLE file_app_usage ADD COLUMN blobs bigint NOT NULL DEFAULT 0;

CREATE OR REPLACE FUNCTION parley_blob_usage_added() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO file_app_usage AS u (app_id, bytes, blobs)
    SELECT app_id, sum(size), count(*) FROM added GROUP BY app_id ORDER BY app_id
    ON CONFLICT (app_id) DO UPDATE SET bytes = u.bytes + EXCLUDED.bytes, blobs = u.blobs + EXCLUDED.blobs;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION parley_blob_usage_removed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM file_app_usage u WHERE u.app_id IN (SELECT app_id FROM removed) ORDER BY u.app_id FOR UPDATE;
    UPDATE file_app_usage u SET bytes = greatest(0, u.bytes - r.bytes), blobs = greatest(0, u.blobs - r.blobs)
    FROM (SELECT app_id, sum(size) AS bytes, count(*) AS blobs FROM removed GROUP BY app_id) r
    WHERE u.app_id = r.app_id;
    RETURN NULL;
END $$;

UPDATE file_app_usage u SET blobs = (SELECT count(*) FROM file_blobs b WHERE b.app_id = u.app_id);
