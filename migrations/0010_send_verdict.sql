-- The send rules in one place. parley_send_message (one message, migrations/0004) and parley_send_messages (a
-- batch, 0004) each spelled out who may send: a group message needs a sender who is a member, not blocked, in a
-- group that is not dissolved; a 1:1 message needs a recipient who exists. parley_send_verdict says it once and
-- both functions call it, at the same point as before: after the conversation rows are locked (the UPDATE that
-- takes the seq, the batch's FOR UPDATE in id order) and new 1:1 conversations are created, so the verdicts are
-- still read under those locks. Same signatures, same answers.

-- Why a send is refused, or 'stored':
--   no_user     a 1:1 message whose conversation does not exist (the callers create it first whenever the
--               recipient exists, so a missing one means an unknown user)
--   not_member  a group message from a non-member, or to a group that does not exist
--   dissolved   the group was dissolved
--   blocked     the sender is blocked from posting in the group
-- p_conversation_found: the conversation row exists; p_group_id: its group (NULL for 1:1); p_system: a notify
-- message written by the server, which skips the membership checks. A SQL function returning a set, so the batch's
-- query inlines it like the joins it replaces (no call per message).
CREATE FUNCTION parley_send_verdict(p_app bigint, p_conversation text, p_chat_type text, p_from text,
                                    p_conversation_found boolean, p_group_id text, p_system boolean)
RETURNS TABLE (verdict text)
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN NOT p_conversation_found
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
$$;

-- One message: as in 0004, with the verdict taken from parley_send_verdict.
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
        IF EXISTS (SELECT 1 FROM users u WHERE u.app_id = p_app AND u.id = p_to) THEN
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
    FROM parley_send_verdict(p_app, p_conversation, p_chat_type, p_from, conv.id IS NOT NULL, conv.group_id,
                             p_system) v;
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

-- A batch: as in 0004, with the verdicts taken from parley_send_verdict.
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
          AND EXISTS (SELECT 1 FROM users u WHERE u.app_id = i.app AND u.id = i.recipient)),
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
        CROSS JOIN LATERAL parley_send_verdict(i.app, i.conv, i.chat, i.sender, c.id IS NOT NULL, c.group_id, false) v),
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
