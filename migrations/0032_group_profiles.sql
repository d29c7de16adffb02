-- Groups that communities run (issue 22): the group's profile texts and the app's own data.
--
-- `announcement` and `introduction` are '' when unset (constant defaults add the columns without a rewrite);
-- `ex` is the JSON text the server wrote (NULL when unset), as `users.ex`.
ALTER TABLE groups
    ADD COLUMN announcement text NOT NULL DEFAULT '',
    ADD COLUMN introduction text NOT NULL DEFAULT '',
    ADD COLUMN ex text;

-- Who may join by themselves: 'invite_only' (only owners and admins add members: the behaviour before this column),
-- 'open' (anyone of the app joins at once) or 'approval' (a join request that an owner or admin accepts or rejects).
ALTER TABLE groups ADD COLUMN join_policy text NOT NULL DEFAULT 'invite_only'
    CHECK (join_policy IN ('open', 'approval', 'invite_only'));

-- One row per group and user: asking again after a rejection makes the same row pending again. Pending rows are
-- listed oldest first for the group's owner and admins.
CREATE TABLE group_join_requests (
    app_id bigint NOT NULL,
    group_id text NOT NULL,
    user_id text NOT NULL,
    message text NOT NULL DEFAULT '',
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'rejected')),
    created_at timestamptz NOT NULL DEFAULT now(),
    handled_at timestamptz,
    handled_by text,
    PRIMARY KEY (app_id, group_id, user_id),
    FOREIGN KEY (app_id, group_id) REFERENCES groups (app_id, id) ON DELETE CASCADE
);
CREATE INDEX group_join_requests_pending ON group_join_requests (app_id, group_id, created_at, user_id)
    WHERE status = 'pending';
-- An account deletion withdraws the user's requests.
CREATE INDEX group_join_requests_by_user ON group_join_requests (app_id, user_id);

-- Public group search (`GET /api/im/groups/search`): a name prefix compared lower-cased in byte order (as
-- users_nickname_search), over the groups anyone may find: joinable by themselves and not dissolved.
CREATE INDEX groups_name_search ON groups (app_id, lower(name) COLLATE "C", id COLLATE "C")
    WHERE join_policy <> 'invite_only' AND dissolved_at IS NULL;

-- Join requests are user events (to the group's owner and admins, and to the requester), recorded for sync. NOT VALID
-- then VALIDATE: the check of the existing rows does not block writers.
ALTER TABLE changes DROP CONSTRAINT changes_kind_check;
ALTER TABLE changes ADD CONSTRAINT changes_kind_check CHECK (kind IN (
    'revoke', 'edit', 'read', 'conversation', 'membership',
    'friend_request', 'friend_request_rejected', 'friend_request_withdrawn', 'friend_added', 'friend_removed',
    'friend_updated', 'block', 'unblock', 'profile', 'group_join_request', 'group_join_request_handled')) NOT VALID;
ALTER TABLE changes VALIDATE CONSTRAINT changes_kind_check;

-- A group's member list in its order (owner, admins, members; by joining time), so that a page reads only its own
-- rows from a cursor instead of sorting every member of a group at the member limit. Groups only (their rows have no
-- peer), so 1:1 conversations pay nothing for it. The expression is `GroupRepository.memberRank`.
CREATE INDEX conversation_members_group_order ON conversation_members
    (app_id, conversation_id, (CASE role WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 ELSE 2 END), joined_at, user_id)
    WHERE peer_id IS NULL;
