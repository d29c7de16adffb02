-- The admin API's messages and group mutes (issue 20).

-- A message's push settings, set by the app's backend (POST /api/admin/messages `options.noPush`):
-- {"disabled": true} queues no push job. NULL for every message clients send (a nullable column without a default
-- is added without rewriting the table).
ALTER TABLE messages ADD COLUMN push_options jsonb;

-- A message that does not count toward unread (`options.noUnread`). Unread subtracts the revoked messages after the
-- read point, so it must subtract only those that counted (a constant default adds the column without a rewrite).
ALTER TABLE messages ADD COLUMN uncounted boolean NOT NULL DEFAULT false;

-- A user's total unread, as in 0012, subtracting only revoked messages that counted.
CREATE OR REPLACE FUNCTION parley_unread_total(p_app bigint, p_user text) RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT coalesce(sum(greatest(0,
        c.counted_total
        - coalesce((SELECT p.counted_prefix FROM messages p WHERE p.app_id = cm.app_id
                    AND p.conversation_id = cm.conversation_id AND p.seq = greatest(cm.read_seq, cm.clear_seq)), 0)
        - (SELECT count(*) FROM messages r WHERE r.app_id = cm.app_id AND r.conversation_id = cm.conversation_id
           AND r.seq > greatest(cm.read_seq, cm.clear_seq) AND r.revoked_at IS NOT NULL AND NOT r.uncounted))), 0)::bigint
    FROM conversation_members cm
    JOIN conversations c ON c.app_id = cm.app_id AND c.id = cm.conversation_id
    WHERE cm.app_id = p_app AND cm.user_id = p_user
      AND c.last_seq > greatest(cm.read_seq, cm.clear_seq)
      AND (cm.hidden_seq IS NULL OR c.last_seq > cm.hidden_seq)
$$;

CREATE OR REPLACE FUNCTION parley_queue_push_jobs() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO push_jobs (app_id, message_id)
    SELECT m.app_id, m.id FROM stored_messages m
    WHERE m.msg_type <> 'notify'
      AND (m.push_options IS NULL OR m.push_options->'disabled' IS DISTINCT FROM 'true'::jsonb)
      AND EXISTS (SELECT 1 FROM app_push_settings s WHERE s.app_id = m.app_id AND s.enabled)
    ORDER BY m.id;
    RETURN NULL;
END;
$$;

-- Group mutes: a member muted until a time, and a group where only the owner and admins speak. Both are read by the
-- send verdict from the rows it already joins (no statement more per send).
ALTER TABLE conversation_members ADD COLUMN muted_until timestamptz;
ALTER TABLE groups ADD COLUMN muted_all boolean NOT NULL DEFAULT false;

-- 0019's verdict with the mutes of a group send (not the server's own):
--   muted:<epoch ms>  the sender is muted in the group until then
--   muted_all         the group is muted and the sender is a plain member
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
    LEFT JOIN conversation_members cm
      ON p_chat_type = 'group' AND NOT p_system
         AND cm.app_id = p_app AND cm.user_id = p_from AND cm.conversation_id = p_conversation
    LEFT JOIN groups g
      ON p_chat_type = 'group' AND NOT p_system AND g.app_id = p_app AND g.id = p_group_id
    LEFT JOIN LATERAL parley_direct_verdict(p_app, p_from, p_to) d ON p_chat_type = 'single' AND NOT p_system
$$;

-- One message: as in 0019, plus what the admin API sets. p_push_options: stored with the message (the push trigger
-- reads it). p_uncounted: the message does not count toward unread (as notify messages do not). Both default, so
-- callers that never set them are unchanged.
DROP FUNCTION parley_send_message(bigint, text, text, text, text, text, text, text, text, boolean);
CREATE FUNCTION parley_send_message(p_app bigint, p_conversation text, p_chat_type text, p_from text,
                                    p_to text, p_msg_type text, p_content text, p_extra text,
                                    p_client_msg_id text, p_system boolean,
                                    p_push_options jsonb DEFAULT NULL, p_uncounted boolean DEFAULT false)
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

    IF refusal IS NULL THEN
        INSERT INTO messages (id, app_id, conversation_id, seq, from_id, to_id, chat_type, msg_type, content, extra,
                              client_msg_id, counted_prefix, created_at, push_options, uncounted)
        VALUES (new_id, p_app, p_conversation, conv.last_seq, p_from, p_to, p_chat_type, p_msg_type, p_content,
                p_extra, p_client_msg_id, conv.counted_total, conv.last_message_at, p_push_options, p_uncounted)
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

    RETURN QUERY SELECT 'stored'::text, stored;
END;
$$;
