-- Group bans (issue 22): an `open` group without them cannot keep a removed member out (they join again at once).
-- A banned user is removed if they are a member, cannot join or ask to join (1146) until an owner or admin lifts the
-- ban; adding them as a member lifts it. Listed newest first for the group's owner and admins.
CREATE TABLE group_bans (
    app_id bigint NOT NULL,
    group_id text NOT NULL,
    user_id text NOT NULL,
    banned_by text NOT NULL,
    banned_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, group_id, user_id),
    FOREIGN KEY (app_id, group_id) REFERENCES groups (app_id, id) ON DELETE CASCADE
);
-- An account deletion lifts the user's bans.
CREATE INDEX group_bans_by_user ON group_bans (app_id, user_id);
