-- Conversations and messages (issue 4).
--
-- Order: every conversation row carries `last_seq`; a sender locks the row (FOR UPDATE), takes last_seq + 1 and
-- holds the lock until COMMIT, so sequence numbers are assigned in commit order, without gaps or duplicates
-- (a rolled-back send rolls its increment back too).
--
-- Sync: rows of `messages` and `changes` carry the id of the transaction that wrote them (xid8) and a position
-- from one shared sequence. A reader only returns rows whose xid is below the xmin of its snapshot (every
-- transaction below it has ended, so no row can appear there later), ordered by (xid, position): a cursor is the
-- last (xid, position) returned, and nothing committed later can sort before it.

-- Per-app override of the server-wide revoke window (NULL: PARLEY_IM_REVOKE_WINDOW_SECONDS).
ALTER TABLE apps ADD COLUMN revoke_window_seconds integer CHECK (revoke_window_seconds >= 0);

CREATE SEQUENCE stream_positions;

CREATE TABLE groups (
    app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    id text NOT NULL,
    name text NOT NULL,
    avatar_key text,
    owner_id text NOT NULL,
    member_count integer NOT NULL DEFAULT 0,
    dissolved_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, id)
);

CREATE TABLE conversations (
    app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    -- single: 'si:' || lower id || ':' || higher id (':' cannot occur in a user id); group: 'sg:' || group id.
    id text NOT NULL,
    chat_type text NOT NULL CHECK (chat_type IN ('single', 'group')),
    group_id text,
    last_seq bigint NOT NULL DEFAULT 0,
    -- Messages that count toward unread counts (everything but notify messages), so that
    -- unread = counted_total - (counted_prefix of the message at the read point) - revoked messages after it.
    counted_total bigint NOT NULL DEFAULT 0,
    last_message_id bigint,
    last_message_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, id)
);

-- One row per (user, conversation) the user belongs to: group members and both sides of a 1:1 conversation.
-- Leaving or being removed from a group deletes the row: the conversation and its history are gone for them.
CREATE TABLE conversation_members (
    app_id bigint NOT NULL,
    user_id text NOT NULL,
    conversation_id text NOT NULL,
    -- single: the other user (the user itself for notes to self); NULL for groups.
    peer_id text,
    role text NOT NULL DEFAULT 'member' CHECK (role IN ('owner', 'admin', 'member')),
    -- Group members an owner or admin has blocked from posting.
    blocked boolean NOT NULL DEFAULT false,
    read_seq bigint NOT NULL DEFAULT 0,
    -- History at or below this seq is hidden from this user (clear history, delete, or joined a group later).
    clear_seq bigint NOT NULL DEFAULT 0,
    -- Deleted from this user's list while the conversation's last_seq <= hidden_seq.
    hidden_seq bigint,
    is_pinned boolean NOT NULL DEFAULT false,
    pinned_at timestamptz,
    draft_text text NOT NULL DEFAULT '',
    draft_updated_at timestamptz,
    muted boolean NOT NULL DEFAULT false,
    joined_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, user_id, conversation_id),
    FOREIGN KEY (app_id, conversation_id) REFERENCES conversations (app_id, id) ON DELETE CASCADE
);
CREATE INDEX conversation_members_by_conversation ON conversation_members (app_id, conversation_id);

CREATE TABLE messages (
    id bigint PRIMARY KEY DEFAULT nextval('stream_positions'),
    app_id bigint NOT NULL,
    conversation_id text NOT NULL,
    seq bigint NOT NULL,
    from_id text NOT NULL,
    to_id text NOT NULL,
    chat_type text NOT NULL,
    msg_type text NOT NULL,
    -- JSON text; both NULL once the message is revoked (the content is wiped, not hidden).
    content text,
    extra text,
    client_msg_id text NOT NULL,
    counted_prefix bigint NOT NULL,
    xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
    created_at timestamptz NOT NULL,
    edited_at timestamptz,
    revoked_at timestamptz,
    revoked_by text,
    CONSTRAINT messages_seq UNIQUE (app_id, conversation_id, seq),
    CONSTRAINT messages_client_msg_id UNIQUE (app_id, from_id, client_msg_id)
);
CREATE INDEX messages_stream ON messages (app_id, conversation_id, xid, id);
-- Unread counts subtract revoked messages after the read point; revocations are rare, so this index is small.
CREATE INDEX messages_revoked ON messages (app_id, conversation_id, seq) WHERE revoked_at IS NOT NULL;

-- Everything but new messages that sync must replay: revokes, edits, read marks, per-user conversation changes,
-- membership changes. user_id NULL: every member of the conversation sees it; otherwise only that user.
CREATE TABLE changes (
    id bigint NOT NULL DEFAULT nextval('stream_positions'),
    app_id bigint NOT NULL,
    conversation_id text NOT NULL,
    user_id text,
    kind text NOT NULL CHECK (kind IN ('revoke', 'edit', 'read', 'conversation', 'membership')),
    message_id bigint,
    payload text NOT NULL DEFAULT '{}',
    xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX changes_by_conversation ON changes (app_id, conversation_id, xid, id) WHERE user_id IS NULL;
CREATE INDEX changes_by_user ON changes (app_id, user_id, xid, id) WHERE user_id IS NOT NULL;

-- Stores one message in one round trip, or answers why not. Outcomes:
--   stored      the new message (seq assigned under the conversation's row lock)
--   duplicate   the sender already sent this client_msg_id: the original message, nothing stored
--   no_user     single chat to a user that does not exist in the app
--   not_member  group message from a non-member (or a group that does not exist)
--   blocked     group member blocked from posting
--   dissolved   the group was dissolved
-- p_system: notify messages written by the server for group changes skip the membership checks.
CREATE FUNCTION parley_send_message(p_app bigint, p_conversation text, p_chat_type text, p_from text, p_to text,
                                    p_msg_type text, p_content text, p_extra text, p_client_msg_id text,
                                    p_system boolean)
RETURNS TABLE (outcome text, message messages)
LANGUAGE plpgsql AS $$
DECLARE
    existing messages;
    conv conversations;
    member conversation_members;
    counted integer := CASE WHEN p_msg_type = 'notify' THEN 0 ELSE 1 END;
    stored messages;
BEGIN
    SELECT * INTO existing FROM messages m
    WHERE m.app_id = p_app AND m.from_id = p_from AND m.client_msg_id = p_client_msg_id;
    IF FOUND THEN
        RETURN QUERY SELECT 'duplicate'::text, existing;
        RETURN;
    END IF;

    IF p_chat_type = 'single' THEN
        SELECT * INTO conv FROM conversations c WHERE c.app_id = p_app AND c.id = p_conversation FOR UPDATE;
        IF NOT FOUND THEN
            IF NOT EXISTS (SELECT 1 FROM users u WHERE u.app_id = p_app AND u.id = p_to) THEN
                RETURN QUERY SELECT 'no_user'::text, NULL::messages;
                RETURN;
            END IF;
            -- A concurrent first message may insert the row first: ON CONFLICT waits for it, then we lock it.
            INSERT INTO conversations (app_id, id, chat_type) VALUES (p_app, p_conversation, 'single')
            ON CONFLICT DO NOTHING;
            INSERT INTO conversation_members (app_id, user_id, conversation_id, peer_id)
            VALUES (p_app, p_from, p_conversation, p_to), (p_app, p_to, p_conversation, p_from)
            ON CONFLICT DO NOTHING;
            SELECT * INTO conv FROM conversations c WHERE c.app_id = p_app AND c.id = p_conversation FOR UPDATE;
        END IF;
    ELSE
        SELECT * INTO conv FROM conversations c WHERE c.app_id = p_app AND c.id = p_conversation FOR UPDATE;
        IF NOT FOUND THEN
            RETURN QUERY SELECT 'not_member'::text, NULL::messages;
            RETURN;
        END IF;
        IF NOT p_system THEN
            -- Checked under the conversation lock: removals write a notify message, so they serialize with sends.
            SELECT * INTO member FROM conversation_members cm
            WHERE cm.app_id = p_app AND cm.user_id = p_from AND cm.conversation_id = p_conversation;
            IF NOT FOUND THEN
                RETURN QUERY SELECT 'not_member'::text, NULL::messages;
                RETURN;
            END IF;
            IF EXISTS (SELECT 1 FROM groups g WHERE g.app_id = p_app AND g.id = conv.group_id
                       AND g.dissolved_at IS NOT NULL) THEN
                RETURN QUERY SELECT 'dissolved'::text, NULL::messages;
                RETURN;
            END IF;
            IF member.blocked THEN
                RETURN QUERY SELECT 'blocked'::text, NULL::messages;
                RETURN;
            END IF;
        END IF;
    END IF;

    -- A racing duplicate that committed while we waited for the lock is visible now (new snapshot per statement).
    SELECT * INTO existing FROM messages m
    WHERE m.app_id = p_app AND m.from_id = p_from AND m.client_msg_id = p_client_msg_id;
    IF FOUND THEN
        RETURN QUERY SELECT 'duplicate'::text, existing;
        RETURN;
    END IF;

    INSERT INTO messages (app_id, conversation_id, seq, from_id, to_id, chat_type, msg_type, content, extra,
                          client_msg_id, counted_prefix, created_at)
    VALUES (p_app, p_conversation, conv.last_seq + 1, p_from, p_to, p_chat_type, p_msg_type, p_content, p_extra,
            p_client_msg_id, conv.counted_total + counted,
            -- Times never go backwards within a conversation, whatever the transactions' start times.
            greatest(clock_timestamp(), conv.last_message_at))
    RETURNING * INTO stored;

    UPDATE conversations c
    SET last_seq = stored.seq, counted_total = stored.counted_prefix, last_message_id = stored.id,
        last_message_at = stored.created_at
    WHERE c.app_id = p_app AND c.id = p_conversation;

    -- Sending means having read everything before it.
    IF NOT p_system THEN
        UPDATE conversation_members cm SET read_seq = stored.seq
        WHERE cm.app_id = p_app AND cm.user_id = p_from AND cm.conversation_id = p_conversation
          AND cm.read_seq < stored.seq;
    END IF;

    RETURN QUERY SELECT 'stored'::text, stored;
END;
$$;
