-- The social graph (issue 19): friend requests, friendships, blocks, who may start a 1:1 chat, and the profile
-- fields friends see. Every change of it reaches the devices of the users it concerns live and through sync: the
-- `changes` log gains per-user rows with no conversation.

-- Who may start a 1:1 chat: 'anyone', or only 'friends' (then every 1:1 send between non-friends is refused, also in
-- conversations from before: ending a friendship ends the chat).
ALTER TABLE apps ADD COLUMN direct_messages text NOT NULL DEFAULT 'anyone'
    CHECK (direct_messages IN ('anyone', 'friends'));

-- Profile fields beside nickname and avatar; `searchable` false keeps the user out of user search (a known id or
-- username still finds nobody). `deleted_at`: the account was deleted (the row stays, anonymised, so that messages
-- still name a sender).
ALTER TABLE users ADD COLUMN signature text NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN ex text;
ALTER TABLE users ADD COLUMN searchable boolean NOT NULL DEFAULT true;
ALTER TABLE users ADD COLUMN deleted_at timestamptz;

-- One row per side of a friendship (the remark is the owner's). Removal keeps the row as a tombstone
-- (active = false) so that an incremental friend-list sync (`since`) learns of it. xid and position order the rows
-- for that sync the way `changes` are ordered (migrations/0003): a cursor never skips a transaction that commits
-- later. Every write sets them afresh.
CREATE TABLE friendships (
    app_id bigint NOT NULL,
    user_id text NOT NULL,
    friend_id text NOT NULL,
    remark text NOT NULL DEFAULT '',
    active boolean NOT NULL DEFAULT true,
    friends_since timestamptz NOT NULL DEFAULT now(),
    xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
    position bigint NOT NULL DEFAULT nextval('stream_positions'),
    PRIMARY KEY (app_id, user_id, friend_id),
    FOREIGN KEY (app_id, user_id) REFERENCES users (app_id, id) ON DELETE CASCADE,
    FOREIGN KEY (app_id, friend_id) REFERENCES users (app_id, id) ON DELETE CASCADE,
    CHECK (user_id <> friend_id)
);
CREATE INDEX friendships_stream ON friendships (app_id, user_id, xid, position);

CREATE TABLE friend_requests (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id bigint NOT NULL,
    from_id text NOT NULL,
    to_id text NOT NULL,
    message text NOT NULL DEFAULT '',
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'rejected', 'withdrawn')),
    created_at timestamptz NOT NULL DEFAULT now(),
    handled_at timestamptz,
    FOREIGN KEY (app_id, from_id) REFERENCES users (app_id, id) ON DELETE CASCADE,
    FOREIGN KEY (app_id, to_id) REFERENCES users (app_id, id) ON DELETE CASCADE,
    CHECK (from_id <> to_id)
);
-- At most one pending request per direction.
CREATE UNIQUE INDEX friend_requests_pending ON friend_requests (app_id, from_id, to_id) WHERE status = 'pending';
CREATE INDEX friend_requests_incoming ON friend_requests (app_id, to_id, id DESC);
CREATE INDEX friend_requests_outgoing ON friend_requests (app_id, from_id, id DESC);

CREATE TABLE user_blocks (
    app_id bigint NOT NULL,
    blocker_id text NOT NULL,
    blocked_id text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, blocker_id, blocked_id),
    FOREIGN KEY (app_id, blocker_id) REFERENCES users (app_id, id) ON DELETE CASCADE,
    FOREIGN KEY (app_id, blocked_id) REFERENCES users (app_id, id) ON DELETE CASCADE,
    CHECK (blocker_id <> blocked_id)
);
CREATE INDEX user_blocks_listing ON user_blocks (app_id, blocker_id, created_at DESC, blocked_id);

-- Per-user changes that belong to no conversation (friends, blocks, profiles): conversation_id NULL, user_id set.
ALTER TABLE changes ALTER COLUMN conversation_id DROP NOT NULL;
ALTER TABLE changes DROP CONSTRAINT changes_kind_check;
ALTER TABLE changes ADD CONSTRAINT changes_kind_check CHECK (kind IN (
    'revoke', 'edit', 'read', 'conversation', 'membership',
    'friend_request', 'friend_request_rejected', 'friend_request_withdrawn', 'friend_added', 'friend_removed',
    'friend_updated', 'block', 'unblock', 'profile'));
ALTER TABLE changes ADD CONSTRAINT changes_conversation_or_user CHECK (conversation_id IS NOT NULL OR user_id IS NOT NULL);

-- A 1:1 conversation with an account that was deleted: sends to it answer as for a user that never existed. Set by
-- the account deletion, read from the conversation row every send already locks (no lookup more per send).
ALTER TABLE conversations ADD COLUMN closed_at timestamptz;

-- Whether a 1:1 message from p_from may reach p_to (no row, or NULL: it may):
--   peer_refused  p_to blocked p_from
--   not_friend    the app lets only friends chat 1:1 and they are not friends
-- A SQL function returning a set, like parley_send_verdict: the planner inlines it into the query that calls it,
-- so it costs the send no statement of its own (a scalar SQL function would even be planned at every call).
CREATE FUNCTION parley_direct_verdict(p_app bigint, p_from text, p_to text)
RETURNS TABLE (verdict text)
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN EXISTS (SELECT 1 FROM user_blocks b
                             WHERE b.app_id = p_app AND b.blocker_id = p_to AND b.blocked_id = p_from)
                    THEN 'peer_refused'
                WHEN a.direct_messages = 'friends'
                     AND NOT EXISTS (SELECT 1 FROM friendships f
                                     WHERE f.app_id = p_app AND f.user_id = p_from AND f.friend_id = p_to AND f.active)
                    THEN 'not_friend'
           END
    FROM apps a WHERE a.id = p_app
$$;

-- 0010's verdict with the recipient: a 1:1 message (not the server's own) to a deleted account's closed conversation
-- answers no_user, then the direct verdict may refuse it, in the statement that already reads the verdict under the
-- conversation's lock (no statement more per send).
DROP FUNCTION parley_send_verdict(bigint, text, text, text, boolean, text, boolean);
CREATE FUNCTION parley_send_verdict(p_app bigint, p_conversation text, p_chat_type text, p_from text, p_to text,
                                    p_conversation_found boolean, p_conversation_closed boolean, p_group_id text,
                                    p_system boolean)
RETURNS TABLE (verdict text)
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN p_conversation_closed AND p_chat_type = 'single' AND NOT p_system THEN 'no_user'
                WHEN d.verdict IS NOT NULL THEN d.verdict
                WHEN NOT p_conversation_found
                    THEN CASE WHEN p_chat_type = 'single' THEN 'no_user' ELSE 'not_member' END
                WHEN p_chat_type <> 'group' OR p_system THEN 'stored'
                WHEN cm.user_id IS NULL THEN 'not_member'
                WHEN g.dissolved_at IS NOT NULL THEN 'dissolved'
                WHEN cm.blocked THEN 'blocked'
                ELSE 'stored' END
    FROM (SELECT) AS one
    LEFT JOIN conversation_members cm
      ON p_chat_type = 'group' AND NOT p_system
         AND cm.app_id = p_app AND cm.user_id = p_from AND cm.conversation_id = p_conversation
    LEFT JOIN groups g
      ON p_chat_type = 'group' AND NOT p_system AND g.app_id = p_app AND g.id = p_group_id
    LEFT JOIN LATERAL parley_direct_verdict(p_app, p_from, p_to) d ON p_chat_type = 'single' AND NOT p_system
$$;

-- One message: as in 0010; a first 1:1 message the direct verdict refuses creates no conversation.
CREATE OR REPLACE FUNCTION parley_send_message(p_app bigint, p_conversation text, p_chat_type text, p_from text,
                                               p_to text, p_msg_type text, p_content text, p_extra text,
                                               p_client_msg_id text, p_system boolean)
RETURNS TABLE (outcome text, message messages)
LANGUAGE plpgsql AS $$
DECLARE
    existing messages;
    conv conversations;
    counted integer := CASE WHEN p_msg_type = 'notify' THEN 0 ELSE 1 END;
    refusal text;
    stored messages;
    new_id bigint := nextval('stream_positions');
BEGIN
    -- Take the next seq; the row stays locked until COMMIT, so seqs follow commit order. Times never go
    -- backwards within a conversation, whatever the transactions' start times.
    UPDATE conversations c SET last_seq = c.last_seq + 1, counted_total = c.counted_total + counted,
                               last_message_id = new_id,
                               last_message_at = greatest(clock_timestamp(), c.last_message_at)
    WHERE c.app_id = p_app AND c.id = p_conversation
    RETURNING * INTO conv;
    -- A first 1:1 message to a user that exists creates the conversation (a missing one then means an unknown
    -- user). A concurrent first message may insert the row first: ON CONFLICT waits for it, then we update it.
    IF NOT FOUND AND p_chat_type = 'single' THEN
        IF EXISTS (SELECT 1 FROM users u WHERE u.app_id = p_app AND u.id = p_to AND u.deleted_at IS NULL)
           AND (p_system OR NOT EXISTS (SELECT 1 FROM parley_direct_verdict(p_app, p_from, p_to) d
                                        WHERE d.verdict IS NOT NULL)) THEN
            INSERT INTO conversations (app_id, id, chat_type) VALUES (p_app, p_conversation, 'single')
            ON CONFLICT DO NOTHING;
            INSERT INTO conversation_members (app_id, user_id, conversation_id, peer_id)
            VALUES (p_app, p_from, p_conversation, p_to), (p_app, p_to, p_conversation, p_from)
            ON CONFLICT DO NOTHING;
            UPDATE conversations c SET last_seq = c.last_seq + 1, counted_total = c.counted_total + counted,
                                       last_message_id = new_id,
                                       last_message_at = greatest(clock_timestamp(), c.last_message_at)
            WHERE c.app_id = p_app AND c.id = p_conversation
            RETURNING * INTO conv;
        END IF;
    END IF;

    -- Checked under the conversation row lock the UPDATE took: removals write a notify message, so they
    -- serialize with sends.
    SELECT v.verdict INTO refusal
    FROM parley_send_verdict(p_app, p_conversation, p_chat_type, p_from, p_to, conv.id IS NOT NULL,
                             conv.closed_at IS NOT NULL, conv.group_id, p_system) v;
    IF conv.id IS NULL THEN
        -- No conversation: nothing was taken, nothing to give back.
        RETURN QUERY SELECT refusal, NULL::messages;
        RETURN;
    END IF;
    IF refusal = 'stored' THEN refusal := NULL; END IF;

    IF refusal IS NULL THEN
        INSERT INTO messages (id, app_id, conversation_id, seq, from_id, to_id, chat_type, msg_type, content, extra,
                              client_msg_id, counted_prefix, created_at)
        VALUES (new_id, p_app, p_conversation, conv.last_seq, p_from, p_to, p_chat_type, p_msg_type, p_content,
                p_extra, p_client_msg_id, conv.counted_total, conv.last_message_at)
        ON CONFLICT ON CONSTRAINT messages_client_msg_id DO NOTHING
        RETURNING * INTO stored;
        IF NOT FOUND THEN refusal := 'duplicate'; END IF;
    END IF;

    IF refusal IS NOT NULL THEN
        -- Give the seq back, and the last message (we still hold the row lock, so nobody took a later one).
        UPDATE conversations c SET last_seq = c.last_seq - 1, counted_total = c.counted_total - counted,
                                   last_message_id = prior.id, last_message_at = prior.created_at
        FROM (SELECT max(m.id) AS id, max(m.created_at) AS created_at FROM messages m
              WHERE m.app_id = p_app AND m.conversation_id = p_conversation AND m.seq = conv.last_seq - 1) prior
        WHERE c.app_id = p_app AND c.id = p_conversation;
        IF refusal = 'duplicate' THEN
            SELECT * INTO existing FROM messages m
            WHERE m.app_id = p_app AND m.from_id = p_from AND m.client_msg_id = p_client_msg_id;
            RETURN QUERY SELECT 'duplicate'::text, existing;
        ELSE
            RETURN QUERY SELECT refusal, NULL::messages;
        END IF;
        RETURN;
    END IF;

    -- Sending means having read everything before it.
    IF NOT p_system THEN
        UPDATE conversation_members cm SET read_seq = stored.seq
        WHERE cm.app_id = p_app AND cm.user_id = p_from AND cm.conversation_id = p_conversation
          AND cm.read_seq < stored.seq;
    END IF;

    RETURN QUERY SELECT 'stored'::text, stored;
END;
$$;

-- A batch: as in 0010, with the same verdicts (no conversation is created for a refused pair).
CREATE OR REPLACE FUNCTION parley_send_messages(p_app bigint[], p_conversation text[], p_chat_type text[], p_from text[],
                                     p_to text[], p_msg_type text[], p_content text[], p_extra text[],
                                     p_client_msg_id text[])
RETURNS TABLE (ordinal integer, outcome text, id bigint, seq bigint, created_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    answered bigint;
    batch_time timestamptz;
BEGIN
    WITH fresh AS (
        SELECT DISTINCT i.app, i.conv, i.sender, i.recipient
        FROM unnest(p_app, p_conversation, p_chat_type, p_from, p_to) AS i(app, conv, chat, sender, recipient)
        WHERE i.chat = 'single'
          AND NOT EXISTS (SELECT 1 FROM conversations c WHERE c.app_id = i.app AND c.id = i.conv)
          AND EXISTS (SELECT 1 FROM users u WHERE u.app_id = i.app AND u.id = i.recipient AND u.deleted_at IS NULL)
          AND NOT EXISTS (SELECT 1 FROM parley_direct_verdict(i.app, i.sender, i.recipient) d
                          WHERE d.verdict IS NOT NULL)),
    created AS (
        INSERT INTO conversations (app_id, id, chat_type)
        SELECT DISTINCT f.app, f.conv, 'single' FROM fresh f
        ON CONFLICT DO NOTHING)
    INSERT INTO conversation_members (app_id, user_id, conversation_id, peer_id)
    SELECT f.app, f.sender, f.conv, f.recipient FROM fresh f
    UNION
    SELECT f.app, f.recipient, f.conv, f.sender FROM fresh f
    ON CONFLICT DO NOTHING;

    PERFORM 1
    FROM (SELECT DISTINCT i.app, i.conv FROM unnest(p_app, p_conversation) AS i(app, conv)) i
    JOIN conversations c ON c.app_id = i.app AND c.id = i.conv
    ORDER BY c.app_id, c.id
    FOR UPDATE OF c;

    -- One time for the batch, never before a conversation's last message (times never go backwards).
    batch_time := clock_timestamp();

    RETURN QUERY
    WITH input AS (
        SELECT * FROM unnest(p_app, p_conversation, p_chat_type, p_from, p_to, p_msg_type, p_content, p_extra,
                             p_client_msg_id)
            WITH ORDINALITY AS i(app, conv, chat, sender, recipient, mtype, content, extra, client, ord)),
    checked AS (
        SELECT i.*, c.last_seq, c.counted_total, c.last_message_at, v.verdict
        FROM input i
        LEFT JOIN conversations c ON c.app_id = i.app AND c.id = i.conv
        CROSS JOIN LATERAL parley_send_verdict(i.app, i.conv, i.chat, i.sender, i.recipient, c.id IS NOT NULL,
                                               c.closed_at IS NOT NULL, c.group_id, false) v),
    numbered AS (
        SELECT ch.*,
               ch.last_seq + row_number() OVER w AS seq,
               ch.counted_total + sum(CASE WHEN ch.mtype = 'notify' THEN 0 ELSE 1 END) OVER w AS prefix,
               greatest(batch_time, ch.last_message_at) AS created,
               nextval('stream_positions') AS new_id
        FROM checked ch
        WHERE ch.verdict = 'stored'
        WINDOW w AS (PARTITION BY ch.app, ch.conv ORDER BY ch.ord)),
    inserted AS (
        INSERT INTO messages (id, app_id, conversation_id, seq, from_id, to_id, chat_type, msg_type, content, extra,
                              client_msg_id, counted_prefix, created_at)
        SELECT n.new_id, n.app, n.conv, n.seq, n.sender, n.recipient, n.chat, n.mtype, n.content, n.extra, n.client,
               n.prefix, n.created
        FROM numbered n
        RETURNING messages.id),
    conversations_updated AS (
        UPDATE conversations c
        SET last_seq = x.seq, counted_total = x.prefix, last_message_id = x.new_id, last_message_at = x.created
        FROM (SELECT DISTINCT ON (n.app, n.conv) n.app, n.conv, n.seq, n.prefix, n.new_id, n.created
              FROM numbered n ORDER BY n.app, n.conv, n.seq DESC) x
        WHERE c.app_id = x.app AND c.id = x.conv),
    readers_updated AS (
        UPDATE conversation_members cm SET read_seq = x.seq
        FROM (SELECT n.app, n.conv, n.sender, max(n.seq) AS seq FROM numbered n GROUP BY n.app, n.conv, n.sender) x
        WHERE cm.app_id = x.app AND cm.user_id = x.sender AND cm.conversation_id = x.conv AND cm.read_seq < x.seq)
    SELECT n.ord::integer, 'stored'::text, n.new_id, n.seq, n.created FROM numbered n JOIN inserted ON inserted.id = n.new_id
    UNION ALL
    SELECT ch.ord::integer, ch.verdict, NULL::bigint, NULL::bigint, NULL::timestamptz FROM checked ch
    WHERE ch.verdict <> 'stored';

    GET DIAGNOSTICS answered = ROW_COUNT;
    IF answered <> coalesce(array_length(p_conversation, 1), 0) THEN
        RAISE EXCEPTION 'parley_send_messages: % answers for % messages', answered, array_length(p_conversation, 1)
            USING ERRCODE = 'P0001';
    END IF;
END;
$$;
