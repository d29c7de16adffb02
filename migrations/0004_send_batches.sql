-- Cheaper sends, and many sends per statement (issue 4's throughput target).
--
-- 1. The conversation row is locked by the UPDATE that takes the next seq, instead of SELECT ... FOR UPDATE
--    followed by an UPDATE: one tuple version and one WAL record less per message. A send refused after the
--    increment (not a member, blocked, duplicate) puts the seq back while it still holds the lock, so no gap.
--    A repeated clientMsgId is detected by the INSERT itself (ON CONFLICT on the unique index, which also waits
--    for a racing duplicate to commit) rather than by a lookup before it: no query whose plan could pick a
--    worse index on a fresh, not yet analyzed table. The message id is drawn first, so that the same UPDATE
--    also records the conversation's last message: one update of the conversation row per message.
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
    new_id bigint := nextval('stream_positions');
BEGIN
    -- Take the next seq; the row stays locked until COMMIT, so seqs follow commit order. Times never go
    -- backwards within a conversation, whatever the transactions' start times.
    UPDATE conversations c SET last_seq = c.last_seq + 1, counted_total = c.counted_total + counted,
                               last_message_id = new_id,
                               last_message_at = greatest(clock_timestamp(), c.last_message_at)
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
        UPDATE conversations c SET last_seq = c.last_seq + 1, counted_total = c.counted_total + counted,
                                   last_message_id = new_id,
                                   last_message_at = greatest(clock_timestamp(), c.last_message_at)
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

-- Many sends in one statement, set-based: element i of every array describes message i; one answer row per
-- message with its index (1-based). Steps: create new 1:1 conversations; lock every conversation of the batch
-- in id order (so two batches never deadlock); then one statement checks membership, numbers the messages of
-- each conversation after its last_seq, inserts them all, and updates the conversations and the senders' read
-- points. It answers only what the caller does not know yet (id, seq, created_at). A clientMsgId that was
-- already used (by an earlier message or within the batch) fails the insert (unique violation, after waiting
-- for a racing one to commit); the caller then sends the batch one message at a time through
-- parley_send_message, which answers the duplicate. Retries are rare, so the common path keeps a plain insert
-- (ON CONFLICT's speculative insertion costs an extra WAL record per row).
CREATE FUNCTION parley_send_messages(p_app bigint[], p_conversation text[], p_chat_type text[], p_from text[],
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
        SELECT i.*, c.last_seq, c.counted_total, c.last_message_at,
               CASE WHEN c.id IS NULL THEN CASE WHEN i.chat = 'single' THEN 'no_user' ELSE 'not_member' END
                    WHEN i.chat = 'group' AND cm.user_id IS NULL THEN 'not_member'
                    WHEN i.chat = 'group' AND g.dissolved_at IS NOT NULL THEN 'dissolved'
                    WHEN i.chat = 'group' AND cm.blocked THEN 'blocked'
                    ELSE 'stored' END AS verdict
        FROM input i
        LEFT JOIN conversations c ON c.app_id = i.app AND c.id = i.conv
        LEFT JOIN conversation_members cm
          ON i.chat = 'group' AND cm.app_id = i.app AND cm.user_id = i.sender AND cm.conversation_id = i.conv
        LEFT JOIN groups g ON i.chat = 'group' AND g.app_id = i.app AND g.id = c.group_id),
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
