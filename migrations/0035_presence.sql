-- Presence (issue 22): a connection's own report (`presence_set`) joins the row that already records it, so that
-- "who is connected" stays one registry; a user's status is the best over their live rows (online, away if every
-- row is away, offline without rows).
ALTER TABLE realtime_presence ADD COLUMN away boolean NOT NULL DEFAULT false;

-- When each user's last connection on an instance closed (their last-seen time once no other is open), and whether
-- others may see it. A row exists only once a user went offline or chose a setting.
CREATE TABLE user_presence (
    app_id bigint NOT NULL,
    user_id text NOT NULL,
    last_seen timestamptz,
    show_last_seen boolean NOT NULL DEFAULT true,
    PRIMARY KEY (app_id, user_id),
    FOREIGN KEY (app_id, user_id) REFERENCES users (app_id, id) ON DELETE CASCADE
);
