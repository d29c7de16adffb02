-- Less work per stored message on the send path (issue 23). Same answers, same rows written; fewer look-ups:
--
-- 1. The send verdict (0024) joined the sender's group membership and the group for every message and only then
--    dropped the rows of a 1:1 message (a join filter), and looked the direct-message rules up for group messages
--    the same way. Each look-up is now a lateral sub-select gated on the chat type, so a 1:1 message reads neither
--    conversation_members nor groups, and a group message neither apps nor user_blocks. Both sends read it.
-- 2. A batch (0019) ran its "new 1:1 conversations" statement every time, and that statement checked the recipient
--    and the direct-message rules of every message before it tested whether the conversation existed. A cheap
--    existence probe now comes first: the statement runs only when some 1:1 conversation of the batch is missing,
--    as before (first, before any conversation is locked).
-- 3. A batch's answer no longer joins the stored rows back to their input: a failed insert fails the whole
--    statement, so every numbered message is stored, and the insert needs no RETURNING.

CREATE OR REPLACE FUNCTION parley_send_verdict(p_app bigint, p_conversation text, p_chat_type text, p_from text,
                                               p_to text, p_conversation_found boolean, p_conversation_closed boolean,
                                               p_group_id text, p_system boolean)
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
                WHEN cm.muted_until > clock_timestamp()
                    THEN 'muted:' || floor(extract(epoch FROM cm.muted_until) * 1000)::bigint
                WHEN g.muted_all AND cm.role = 'member' THEN 'muted_all'
                ELSE 'stored' END
    FROM (SELECT) AS one
    -- A condition on the parameters alone gates its sub-select: the scan below it does not run when it is false.
    LEFT JOIN LATERAL (SELECT m.user_id, m.blocked, m.muted_until, m.role FROM conversation_members m
                       WHERE p_chat_type = 'group' AND NOT p_system
                         AND m.app_id = p_app AND m.user_id = p_from AND m.conversation_id = p_conversation) cm ON true
    LEFT JOIN LATERAL (SELECT x.dissolved_at, x.muted_all FROM groups x
                       WHERE p_chat_type = 'group' AND NOT p_system AND x.app_id = p_app AND x.id = p_group_id) g ON true
    LEFT JOIN LATERAL (SELECT v.verdict FROM parley_direct_verdict(p_app, p_from, p_to) v
                       WHERE p_chat_type = 'single' AND NOT p_system) d ON true
$$;

CREATE OR REPLACE FUNCTION parley_send_messages(p_app bigint[], p_conversation text[], p_chat_type text[],
                                                p_from text[], p_to text[], p_msg_type text[], p_content text[],
                                                p_extra text[], p_client_msg_id text[])
RETURNS TABLE (ordinal integer, outcome text, id bigint, seq bigint, created_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    answered bigint;
    batch_time timestamptz;
BEGIN
    IF EXISTS (SELECT 1 FROM unnest(p_app, p_conversation, p_chat_type) AS i(app, conv, chat)
               WHERE i.chat = 'single'
                 AND NOT EXISTS (SELECT 1 FROM conversations c WHERE c.app_id = i.app AND c.id = i.conv)) THEN
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
    END IF;

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
    -- Data-modifying CTEs run to completion whether or not the answer reads them.
    inserted AS (
        INSERT INTO messages (id, app_id, conversation_id, seq, from_id, to_id, chat_type, msg_type, content, extra,
                              client_msg_id, counted_prefix, created_at)
        SELECT n.new_id, n.app, n.conv, n.seq, n.sender, n.recipient, n.chat, n.mtype, n.content, n.extra, n.client,
               n.prefix, n.created
        FROM numbered n),
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
    SELECT n.ord::integer, 'stored'::text, n.new_id, n.seq, n.created FROM numbered n
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
