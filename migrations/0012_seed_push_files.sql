-- The seed apps' push and file flows (issue 17).

-- Push tokens: the app's own id for the user as the device reported it (`uid` of `POST /user/device/push-token`;
-- seed 000 sends its business uid `12345` while its IM user is `tb_12345`). Recorded for the app's support tools,
-- never used to choose whom a token is bound to: that is always the authenticated caller.
ALTER TABLE push_tokens ADD COLUMN app_uid text CHECK (length(app_uid) BETWEEN 1 AND 128);

-- Files in custom messages (seed 000 sends images, voice notes, ... as custom messages holding `object_key` or
-- `object_keys`). The references of a custom content: values of members named objectKey, object_key,
-- thumbnailObjectKey, coverObjectKey (strings) and objectKeys, object_keys (arrays of strings), anywhere within 8
-- levels (the content is level 1), at most 32 of them. Messaging refuses a content beyond these bounds
-- (`FileReferences`, the same names and bounds), so for every content it stores this finds what it checked; for
-- anything older or larger it stops at the bounds instead of working in proportion to a hostile document.
CREATE FUNCTION parley_custom_object_keys(c jsonb) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    WITH RECURSIVE node(value, depth) AS (
        SELECT c, 1
        UNION ALL
        SELECT child.value, n.depth + 1
        FROM node n
        CROSS JOIN LATERAL (
            SELECT e.value FROM jsonb_each(CASE WHEN jsonb_typeof(n.value) = 'object' THEN n.value END) AS e
            WHERE e.key NOT IN ('objectKey', 'object_key', 'thumbnailObjectKey', 'coverObjectKey', 'objectKeys',
                                'object_keys')
            UNION ALL
            SELECT a.value FROM jsonb_array_elements(CASE WHEN jsonb_typeof(n.value) = 'array' THEN n.value END) AS a
        ) AS child
        WHERE n.depth < 8 AND jsonb_typeof(child.value) IN ('object', 'array')
    ),
    reference(key) AS (
        SELECT e.value #>> '{}'
        FROM node n, jsonb_each(CASE WHEN jsonb_typeof(n.value) = 'object' THEN n.value END) AS e
        WHERE e.key IN ('objectKey', 'object_key', 'thumbnailObjectKey', 'coverObjectKey')
          AND jsonb_typeof(e.value) = 'string'
        UNION ALL
        SELECT a.value #>> '{}'
        FROM node n, jsonb_each(CASE WHEN jsonb_typeof(n.value) = 'object' THEN n.value END) AS e,
             jsonb_array_elements(CASE WHEN jsonb_typeof(e.value) = 'array' THEN e.value END) AS a
        WHERE e.key IN ('objectKeys', 'object_keys') AND jsonb_typeof(a.value) = 'string'
    )
    SELECT coalesce(array_agg(DISTINCT key), '{}') FROM (SELECT key FROM reference LIMIT 32) AS first_references
$$;

-- 0009's function, with custom messages (and custom messages inside forwards). Every reference name contains
-- "bject" and messaging stores content as its own writer prints it (names unescaped), so a content without it has
-- no reference: the common custom message returns at that test.
CREATE OR REPLACE FUNCTION parley_message_object_keys(p_msg_type text, p_content text) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    IF p_content IS NULL THEN
        RETURN NULL;
    ELSIF p_msg_type IN ('image', 'video', 'audio', 'file') THEN
        RETURN nullif(parley_content_object_keys(p_content::jsonb), '{}');
    ELSIF p_msg_type = 'custom' THEN
        IF strpos(p_content, 'bject') = 0 THEN
            RETURN NULL;
        END IF;
        RETURN nullif(parley_custom_object_keys(p_content::jsonb), '{}');
    ELSIF p_msg_type = 'forward' AND jsonb_typeof(p_content::jsonb -> 'messages') = 'array' THEN
        RETURN (SELECT nullif(array_agg(DISTINCT k), '{}')
                FROM jsonb_array_elements(p_content::jsonb -> 'messages') AS m,
                     unnest(CASE WHEN m ->> 'msgType' = 'custom' THEN parley_custom_object_keys(m -> 'content')
                                 ELSE parley_content_object_keys(m -> 'content') END) AS k);
    END IF;
    RETURN NULL;
END;
$$;

-- Stored rows keep the column's old value until they are written again: rewrite the custom messages and forwards
-- that may hold references (revoked ones have no content), so files already sent in them become readable to their
-- recipients and are kept by the sweeper from now on.
UPDATE messages SET content = content
WHERE msg_type IN ('custom', 'forward') AND content IS NOT NULL AND strpos(content, 'bject') > 0;

-- A user's total unread: the badge of the alerts pushed to them (seed 000 shows it on the app icon). The same count
-- as each conversation's unreadCount in the list (messages after the read point that count, minus those revoked
-- since), summed over the conversations the user's list shows. Only conversations with something unread cost
-- anything: a range of the user's member rows, then two index lookups each.
CREATE FUNCTION parley_unread_total(p_app bigint, p_user text) RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT coalesce(sum(greatest(0,
        c.counted_total
        - coalesce((SELECT p.counted_prefix FROM messages p WHERE p.app_id = cm.app_id
                    AND p.conversation_id = cm.conversation_id AND p.seq = greatest(cm.read_seq, cm.clear_seq)), 0)
        - (SELECT count(*) FROM messages r WHERE r.app_id = cm.app_id AND r.conversation_id = cm.conversation_id
           AND r.seq > greatest(cm.read_seq, cm.clear_seq) AND r.revoked_at IS NOT NULL))), 0)::bigint
    FROM conversation_members cm
    JOIN conversations c ON c.app_id = cm.app_id AND c.id = cm.conversation_id
    WHERE cm.app_id = p_app AND cm.user_id = p_user
      AND c.last_seq > greatest(cm.read_seq, cm.clear_seq)
      AND (cm.hidden_seq IS NULL OR c.last_seq > cm.hidden_seq)
$$;
