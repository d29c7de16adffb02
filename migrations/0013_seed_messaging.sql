-- Messaging as the seed clients use it (issue 17).
--
-- 1. A send may come without a clientMsgId (seed 001's SendMessageParams has none): such a message is stored with
--    client_msg_id NULL and never deduplicated (NULLs never collide in messages_client_msg_id, and the send
--    functions' duplicate lookups compare with `=`, which no NULL matches). Dropping NOT NULL rewrites nothing.
-- 2. History by time (seed 002 pages with begin/end in epoch milliseconds): created_at never goes backwards within
--    a conversation (the send functions take greatest(now, last_message_at) under the conversation's row lock), so
--    the seq where a time starts is found by a binary search over seq on messages_seq: a few index probes, no index
--    of its own for every send to maintain, no scan of the conversation.

ALTER TABLE messages ALTER COLUMN client_msg_id DROP NOT NULL;

-- The first seq of the conversation whose message was created at or after p_at (last_seq + 1 when none; 1 for a
-- conversation that does not exist). STRICT: a NULL time answers NULL, which greatest()/least() then ignore.
CREATE FUNCTION parley_first_seq_at(p_app bigint, p_conversation text, p_at timestamptz)
RETURNS bigint
LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
    lo bigint := 1;
    hi bigint;
    mid bigint;
    found_at timestamptz;
BEGIN
    SELECT c.last_seq + 1 INTO hi FROM conversations c WHERE c.app_id = p_app AND c.id = p_conversation;
    IF hi IS NULL THEN
        RETURN 1;
    END IF;
    -- Every seq below lo is earlier than p_at; every message at or above hi is at or after it.
    WHILE lo < hi LOOP
        mid := lo + (hi - lo) / 2;
        -- The first message at or above mid (seqs have no gaps, but a missing one must not stop the search).
        SELECT m.created_at INTO found_at FROM messages m
        WHERE m.app_id = p_app AND m.conversation_id = p_conversation AND m.seq >= mid
        ORDER BY m.seq LIMIT 1;
        IF NOT FOUND OR found_at >= p_at THEN
            hi := mid;
        ELSE
            lo := mid + 1;
        END IF;
    END LOOP;
    RETURN lo;
END;
$$;
