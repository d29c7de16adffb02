-- Replies and @mentions (issue 22).
--
-- A reply names the message it answers (`reply_to`) and keeps a short quote of it (`reply_quote`, JSON written by
-- the server: msgId, fromId, msgType, text, revoked), so that history shows the quote without reading the original;
-- revoking or editing the original rewrites its replies' quotes (found through the partial index).
ALTER TABLE messages
    ADD COLUMN reply_to bigint,
    ADD COLUMN reply_quote text,
    ADD COLUMN mention_ids text[],
    ADD COLUMN mention_all boolean NOT NULL DEFAULT false;
CREATE INDEX messages_replies ON messages (reply_to) WHERE reply_to IS NOT NULL;

-- A member's earliest unread mention in the conversation: their summary says `mentioned` while it is after their read
-- point, so reading past it clears it without a write.
ALTER TABLE conversation_members
    ADD COLUMN mention_seq bigint,
    ADD COLUMN mention_message_id bigint;

-- 0024's send, plus the reply and the mentions. Only the single send takes them (`SendBatcher` sends such messages
-- alone); the defaults leave every other caller unchanged. A mention of everybody from a plain member is refused
-- (`mention_all_denied`), as the mutes are, before anything is stored.
DROP FUNCTION parley_send_message(bigint, text, text, text, text, text, text, text, text, boolean, jsonb, boolean);
CREATE FUNCTION parley_send_message(p_app bigint, p_conversation text, p_chat_type text, p_from text,
                                    p_to text, p_msg_type text, p_content text, p_extra text,
                                    p_client_msg_id text, p_system boolean,
                                    p_push_options jsonb DEFAULT NULL, p_uncounted boolean DEFAULT false,
                                    p_reply_to bigint DEFAULT NULL, p_reply_quote text DEFAULT NULL,
                                    p_mention_ids text[] DEFAULT NULL, p_mention_all boolean DEFAULT false)
RETURNS TABLE (outcome text, message messages)
LANGUAGE plpgsql AS $$
DECLARE
    existing messages;
    conv conversations;
    counted integer := CASE WHEN p_msg_type = 'notify' OR p_uncounted THEN 0 ELSE 1 END;
    refusal text;
    stored messages;
    new_id bigint := nextval('stream_positions');
BEGIN
    UPDATE conversations c SET last_seq = c.last_seq + 1, counted_total = c.counted_total + counted,
                               last_message_id = new_id,
                               last_message_at = greatest(clock_timestamp(), c.last_message_at)
    WHERE c.app_id = p_app AND c.id = p_conversation
    RETURNING * INTO conv;
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

    SELECT v.verdict INTO refusal
    FROM parley_send_verdict(p_app, p_conversation, p_chat_type, p_from, p_to, conv.id IS NOT NULL,
                             conv.closed_at IS NOT NULL, conv.group_id, p_system) v;
    IF conv.id IS NULL THEN
        RETURN QUERY SELECT refusal, NULL::messages;
        RETURN;
    END IF;
    IF refusal = 'stored' THEN refusal := NULL; END IF;
    -- Mentioning everybody: the group's owner and admins only.
    IF refusal IS NULL AND p_mention_all AND NOT p_system AND NOT EXISTS (
        SELECT 1 FROM conversation_members cm
        WHERE cm.app_id = p_app AND cm.conversation_id = p_conversation AND cm.user_id = p_from
          AND cm.role IN ('owner', 'admin')) THEN
        refusal := 'mention_all_denied';
    END IF;

    IF refusal IS NULL THEN
        INSERT INTO messages (id, app_id, conversation_id, seq, from_id, to_id, chat_type, msg_type, content, extra,
                              client_msg_id, counted_prefix, created_at, push_options, uncounted, reply_to,
                              reply_quote, mention_ids, mention_all)
        VALUES (new_id, p_app, p_conversation, conv.last_seq, p_from, p_to, p_chat_type, p_msg_type, p_content,
                p_extra, p_client_msg_id, conv.counted_total, conv.last_message_at, p_push_options, p_uncounted,
                p_reply_to, p_reply_quote, p_mention_ids, p_mention_all)
        ON CONFLICT ON CONSTRAINT messages_client_msg_id DO NOTHING
        RETURNING * INTO stored;
        IF NOT FOUND THEN refusal := 'duplicate'; END IF;
    END IF;

    IF refusal IS NOT NULL THEN
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

    IF NOT p_system THEN
        UPDATE conversation_members cm SET read_seq = stored.seq
        WHERE cm.app_id = p_app AND cm.user_id = p_from AND cm.conversation_id = p_conversation
          AND cm.read_seq < stored.seq;
    END IF;

    -- The mentioned members' summaries point at their earliest mention they have not read.
    IF p_mention_all OR p_mention_ids IS NOT NULL THEN
        UPDATE conversation_members cm
        SET mention_seq = stored.seq, mention_message_id = stored.id
        WHERE cm.app_id = p_app AND cm.conversation_id = p_conversation AND cm.user_id <> p_from
          AND (p_mention_all OR cm.user_id = ANY(p_mention_ids))
          AND (cm.mention_seq IS NULL OR cm.mention_seq <= greatest(cm.read_seq, cm.clear_seq));
    END IF;

    RETURN QUERY SELECT 'stored'::text, stored;
END;
$$;
