-- Broadcasts of the admin API (issue 20): one 1:1 message from one sender (the system or a user) to many users in
-- one statement, and jobs that send one to every user of an app.

-- One message per recipient, all with the same content, in one transaction: the conversations that do not exist
-- yet are created, every conversation row is locked in id order (as parley_send_messages does, so a broadcast and
-- a batch never deadlock), and every message is numbered, stored and counted set-based. p_conversation and
-- p_client_msg_id go with p_to, index by index; each recipient at most once. Outcomes per ordinal: stored,
-- duplicate (the sender already sent that client id: nothing stored), no_user (unknown or deleted), or a verdict
-- of parley_send_verdict (a user sender's blocks and friends-only policy).
CREATE FUNCTION parley_broadcast_messages(p_app bigint, p_from text, p_to text[], p_conversation text[],
                                          p_client_msg_id text[], p_msg_type text, p_content text, p_extra text,
                                          p_system boolean, p_push_options jsonb, p_uncounted boolean)
RETURNS TABLE (ordinal integer, outcome text, id bigint, seq bigint, created_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    counted integer := CASE WHEN p_msg_type = 'notify' OR p_uncounted THEN 0 ELSE 1 END;
    batch_time timestamptz;
BEGIN
    WITH fresh AS (
        SELECT i.conv, i.recipient
        FROM unnest(p_conversation, p_to) AS i(conv, recipient)
        WHERE NOT EXISTS (SELECT 1 FROM conversations c WHERE c.app_id = p_app AND c.id = i.conv)
          AND EXISTS (SELECT 1 FROM users u WHERE u.app_id = p_app AND u.id = i.recipient AND u.deleted_at IS NULL)
          AND (p_system OR NOT EXISTS (SELECT 1 FROM parley_direct_verdict(p_app, p_from, i.recipient) d
                                       WHERE d.verdict IS NOT NULL))),
    created AS (
        INSERT INTO conversations (app_id, id, chat_type)
        SELECT p_app, f.conv, 'single' FROM fresh f
        ON CONFLICT DO NOTHING)
    INSERT INTO conversation_members (app_id, user_id, conversation_id, peer_id)
    SELECT p_app, p_from, f.conv, f.recipient FROM fresh f
    UNION ALL
    SELECT p_app, f.recipient, f.conv, p_from FROM fresh f
    ON CONFLICT DO NOTHING;

    PERFORM 1 FROM conversations c
    WHERE c.app_id = p_app AND c.id = ANY(p_conversation)
    ORDER BY c.app_id, c.id
    FOR UPDATE OF c;

    batch_time := clock_timestamp();

    RETURN QUERY
    WITH input AS (
        SELECT * FROM unnest(p_to, p_conversation, p_client_msg_id) WITH ORDINALITY AS i(recipient, conv, client, ord)),
    checked AS (
        SELECT i.*, c.last_seq, c.counted_total, c.last_message_at,
               CASE WHEN u.id IS NULL OR u.deleted_at IS NOT NULL THEN 'no_user'
                    WHEN i.client IS NOT NULL AND EXISTS (
                        SELECT 1 FROM messages m
                        WHERE m.app_id = p_app AND m.from_id = p_from AND m.client_msg_id = i.client) THEN 'duplicate'
                    ELSE v.verdict END AS verdict
        FROM input i
        LEFT JOIN users u ON u.app_id = p_app AND u.id = i.recipient
        LEFT JOIN conversations c ON c.app_id = p_app AND c.id = i.conv
        CROSS JOIN LATERAL parley_send_verdict(p_app, i.conv, 'single', p_from, i.recipient, c.id IS NOT NULL,
                                               c.closed_at IS NOT NULL, NULL, p_system) v),
    numbered AS (
        SELECT ch.*, ch.last_seq + 1 AS seq, ch.counted_total + counted AS prefix,
               greatest(batch_time, ch.last_message_at) AS created, nextval('stream_positions') AS new_id
        FROM checked ch
        WHERE ch.verdict = 'stored'),
    inserted AS (
        INSERT INTO messages (id, app_id, conversation_id, seq, from_id, to_id, chat_type, msg_type, content, extra,
                              client_msg_id, counted_prefix, created_at, push_options, uncounted)
        SELECT n.new_id, p_app, n.conv, n.seq, p_from, n.recipient, 'single', p_msg_type, p_content, p_extra,
               n.client, n.prefix, n.created, p_push_options, p_uncounted
        FROM numbered n
        RETURNING messages.id),
    conversations_updated AS (
        UPDATE conversations c
        SET last_seq = n.seq, counted_total = n.prefix, last_message_id = n.new_id, last_message_at = n.created
        FROM numbered n
        WHERE c.app_id = p_app AND c.id = n.conv),
    readers_updated AS (
        UPDATE conversation_members cm SET read_seq = n.seq
        FROM numbered n
        WHERE NOT p_system AND cm.app_id = p_app AND cm.user_id = p_from AND cm.conversation_id = n.conv
          AND cm.read_seq < n.seq)
    SELECT n.ord::integer, 'stored'::text, n.new_id, n.seq, n.created FROM numbered n JOIN inserted ON inserted.id = n.new_id
    UNION ALL
    SELECT ch.ord::integer, ch.verdict, NULL::bigint, NULL::bigint, NULL::timestamptz FROM checked ch
    WHERE ch.verdict <> 'stored';
END;
$$;

-- A broadcast to every user of an app, sent in chunks by whichever instance holds the lease; `cursor` is the last
-- user id sent to (users in id order), so a restarted worker resumes after it. Each chunk's messages carry the
-- client id bc_<job>_<user>: a chunk sent again after a crash before its cursor moved stores nothing twice.
CREATE TABLE broadcast_jobs (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    from_id text NOT NULL,
    system boolean NOT NULL,
    msg_type text NOT NULL,
    content text NOT NULL,
    extra text,
    push_options jsonb,
    uncounted boolean NOT NULL DEFAULT false,
    state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'finished')),
    total integer NOT NULL,
    sent integer NOT NULL DEFAULT 0,
    failed integer NOT NULL DEFAULT 0,
    cursor text,
    -- The worker holding the job until leased_until: only it moves the cursor.
    lease_owner text,
    leased_until timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
);
CREATE INDEX broadcast_jobs_unfinished ON broadcast_jobs (id) WHERE state <> 'finished';
