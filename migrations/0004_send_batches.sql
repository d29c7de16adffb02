-- Cheaper sends, and many sends per statement (issue 4's throughput target).
--
-- 1. The conversation row is locked by the UPDATE that takes the next seq, instead of SELECT ... FOR UPDATE
--    followed by an UPDATE: one tuple version and one WAL record less per message. A send refused after the
--    increment (not a member, blocked, duplicate) puts the seq back while it still holds the lock, so no gap.
-- 2. Conversations and memberships are updated on every send (last_seq, read_seq): leave room on their pages
--    so these updates stay HOT (no index changes).
-- 3. parley_send_messages stores a batch in one transaction: the server gathers the sends that arrive while a
--    batch is being committed, so one commit (one WAL flush) covers many messages. Conversation rows are locked
--    in conversation-id order, so two batches never deadlock.

ALTER TABLE conversations SET (fillfactor = 50);
ALTER TABLE conversation_members SET (fillfactor = 70);

CREATE OR REPLACE FUNCTION parley_send_message(p_app bigint, p_conversation text, p_chat_type text, p_from text,
                                               p_to text, p_msg_type text, p_content text, p_extra text,
                                               p_client_msg_id text, p_system boolean)
RETURNS TABLE (outcome text, message messages)
LANGUAGE plpgsql AS $$
DECLARE
    existing messages;
    conv conversations;
    member conversation_members;
    counted integer := CASE WHEN p_msg_type = 'notify' THEN 0 ELSE 1 END;
    refusal text;
    stored messages;
BEGIN
    -- Take the next seq; the row stays locked until COMMIT, so seqs follow commit order.
    UPDATE conversations c SET last_seq = c.last_seq + 1, counted_total = c.counted_total + counted
    WHERE c.app_id = p_app AND c.id = p_conversation
    RETURNING * INTO conv;
    IF NOT FOUND THEN
        IF p_chat_type <> 'single' THEN
            RETURN QUERY SELECT 'not_member'::text, NULL::messages;
            RETURN;
        END IF;
        IF NOT EXISTS (SELECT 1 FROM users u WHERE u.app_id = p_app AND u.id = p_to) THEN
            RETURN QUERY SELECT 'no_user'::text, NULL::messages;
            RETURN;
        END IF;
        -- A concurrent first message may insert the row first: ON CONFLICT waits for it, then we update it.
        INSERT INTO conversations (app_id, id, chat_type) VALUES (p_app, p_conversation, 'single')
        ON CONFLICT DO NOTHING;
        INSERT INTO conversation_members (app_id, user_id, conversation_id, peer_id)
        VALUES (p_app, p_from, p_conversation, p_to), (p_app, p_to, p_conversation, p_from)
        ON CONFLICT DO NOTHING;
        UPDATE conversations c SET last_seq = c.last_seq + 1, counted_total = c.counted_total + counted
        WHERE c.app_id = p_app AND c.id = p_conversation
        RETURNING * INTO conv;
    END IF;

    IF p_chat_type = 'group' AND NOT p_system THEN
        -- Checked under the conversation lock: removals write a notify message, so they serialize with sends.
        SELECT * INTO member FROM conversation_members cm
        WHERE cm.app_id = p_app AND cm.user_id = p_from AND cm.conversation_id = p_conversation;
        IF NOT FOUND THEN
            refusal := 'not_member';
        ELSIF EXISTS (SELECT 1 FROM groups g WHERE g.app_id = p_app AND g.id = conv.group_id
                      AND g.dissolved_at IS NOT NULL) THEN
            refusal := 'dissolved';
        ELSIF member.blocked THEN
            refusal := 'blocked';
        END IF;
    END IF;

    IF refusal IS NULL THEN
        -- Under the lock, a racing duplicate that committed first is visible (new snapshot per statement).
        SELECT * INTO existing FROM messages m
        WHERE m.app_id = p_app AND m.from_id = p_from AND m.client_msg_id = p_client_msg_id;
        IF FOUND THEN refusal := 'duplicate'; END IF;
    END IF;

    IF refusal IS NOT NULL THEN
        -- Give the seq back (we still hold the row lock, so nobody took a later one).
        UPDATE conversations c SET last_seq = c.last_seq - 1, counted_total = c.counted_total - counted
        WHERE c.app_id = p_app AND c.id = p_conversation;
        IF refusal = 'duplicate' THEN
            RETURN QUERY SELECT 'duplicate'::text, existing;
        ELSE
            RETURN QUERY SELECT refusal, NULL::messages;
        END IF;
        RETURN;
    END IF;

    INSERT INTO messages (app_id, conversation_id, seq, from_id, to_id, chat_type, msg_type, content, extra,
                          client_msg_id, counted_prefix, created_at)
    VALUES (p_app, p_conversation, conv.last_seq, p_from, p_to, p_chat_type, p_msg_type, p_content, p_extra,
            p_client_msg_id, conv.counted_total,
            -- Times never go backwards within a conversation, whatever the transactions' start times.
            greatest(clock_timestamp(), conv.last_message_at))
    RETURNING * INTO stored;

    UPDATE conversations c SET last_message_id = stored.id, last_message_at = stored.created_at
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

-- Many sends in one transaction: element i of every array describes message i; answers one row per message
-- with its index (1-based) in the arrays. Processed in conversation-id order (lock order), and in array order
-- within a conversation.
CREATE FUNCTION parley_send_messages(p_app bigint[], p_conversation text[], p_chat_type text[], p_from text[],
                                     p_to text[], p_msg_type text[], p_content text[], p_extra text[],
                                     p_client_msg_id text[])
RETURNS TABLE (ordinal integer, outcome text, message messages)
LANGUAGE plpgsql AS $$
DECLARE
    i integer;
    result record;
BEGIN
    FOR i IN SELECT s.i FROM generate_subscripts(p_conversation, 1) AS s(i) ORDER BY p_conversation[s.i], s.i LOOP
        SELECT * INTO result FROM parley_send_message(p_app[i], p_conversation[i], p_chat_type[i], p_from[i], p_to[i],
                                                      p_msg_type[i], p_content[i], p_extra[i], p_client_msg_id[i],
                                                      false) r;
        RETURN QUERY SELECT i, result.outcome, result.message;
    END LOOP;
END;
$$;
