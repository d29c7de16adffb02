-- Cheaper after_send (issue 20). A row per message with the message's JSON built in the sending transaction cost
-- the send path about a third of the message itself; now:
--
-- 1. An app with a batch size above 1 has its sends queued a group per statement and batch (a send statement
--    stores many messages, parley_send_messages), so a row's cost (its index entries, lease, delivery, prune) is
--    shared by up to `batch_size` events. Such an app's events all carry the ordering key '*': the outbox leases
--    only a key's oldest pending row (migrations/0022), so its events go in id order, the app's whole stream in the
--    order of the changes, and one row may hold events of many conversations. Events queued before the app's batch
--    size changed keep the key they were queued with.
-- 2. Events that carry a message (after_send, after_edit) store it as columns (`webhook_message`), copied as they
--    are at the change, and the worker writes its JSON: json_build_object looks up the type of every argument on
--    every call, which cost more than the rest of the event.

CREATE TYPE webhook_message AS (
    id bigint, conversation_id text, seq bigint, from_id text, to_id text, chat_type text, msg_type text,
    content text, extra text, client_msg_id text, created_at timestamptz, edited_at timestamptz);

-- A row's data is either `payload` (one event's JSON) or `messages` (one event per message). `grouped_events`
-- NULL: one event, id `evt_<id>`; otherwise that many, `evt_<id>_<n>` (n from 1), delivered and retried together.
ALTER TABLE webhook_jobs
    ALTER COLUMN payload DROP NOT NULL,
    ADD COLUMN messages webhook_message[],
    ADD COLUMN grouped_events integer CHECK (grouped_events >= 1),
    ADD CONSTRAINT webhook_jobs_data CHECK ((payload IS NULL) <> (messages IS NULL)),
    ADD CONSTRAINT webhook_jobs_events CHECK (CASE WHEN messages IS NULL THEN grouped_events IS NULL
                                                   ELSE cardinality(messages) = coalesce(grouped_events, 1) END);
-- A group is large enough to be compressed: lz4 costs a fraction of the default pglz.
ALTER TABLE webhook_jobs ALTER COLUMN messages SET COMPRESSION lz4;

-- The JSON builder is replaced by the columns (the worker writes the JSON, WebhookMessage in Swift).
DROP FUNCTION parley_webhook_message(messages);
CREATE FUNCTION parley_webhook_message(m messages) RETURNS webhook_message
LANGUAGE sql IMMUTABLE AS $$
    SELECT ROW(m.id, m.conversation_id, m.seq, m.from_id, m.to_id, m.chat_type, m.msg_type, m.content, m.extra,
               m.client_msg_id, m.created_at, m.edited_at)::webhook_message
$$;

CREATE OR REPLACE FUNCTION parley_queue_webhook(p_app bigint, p_event text, p_key text, p_payload json) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO webhook_jobs (app_id, event, ordering_key, payload)
    SELECT p_app, p_event, CASE WHEN w.batch_size > 1 THEN '*' ELSE p_key END, p_payload
    FROM app_webhooks w
    WHERE w.app_id = p_app AND w.enabled AND p_event = ANY (w.events)
$$;

CREATE OR REPLACE FUNCTION parley_webhook_after_send() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    lone boolean;
    grouped boolean;
BEGIN
    -- Which kinds of app want it, in one look at the small settings table (a statement with no such app stops here).
    SELECT bool_or(w.batch_size = 1), bool_or(w.batch_size > 1) INTO lone, grouped
    FROM app_webhooks w WHERE w.enabled AND 'after_send' = ANY (w.events);
    IF lone THEN
        -- A call per event: a row per message, keyed by its conversation.
        INSERT INTO webhook_jobs (app_id, event, ordering_key, messages)
        SELECT m.app_id, 'after_send', m.conversation_id, ARRAY[parley_webhook_message(m)]
        FROM stored_messages m
        JOIN app_webhooks w
          ON w.app_id = m.app_id AND w.enabled AND 'after_send' = ANY (w.events) AND w.batch_size = 1
        ORDER BY m.id;
    END IF;
    IF grouped THEN
        -- Batches: each app's messages of the statement in message order, a row per `batch_size` of them.
        INSERT INTO webhook_jobs (app_id, event, ordering_key, messages, grouped_events)
        SELECT a.app_id, 'after_send', '*', a.messages[c * a.size + 1 : (c + 1) * a.size],
               least(a.size, a.n - c * a.size)
        FROM (SELECT m.app_id, w.batch_size AS size, count(*)::integer AS n,
                     array_agg(parley_webhook_message(m) ORDER BY m.id) AS messages
              FROM stored_messages m
              JOIN app_webhooks w
                ON w.app_id = m.app_id AND w.enabled AND 'after_send' = ANY (w.events) AND w.batch_size > 1
              GROUP BY m.app_id, w.batch_size) a
        CROSS JOIN generate_series(0, (a.n - 1) / a.size) AS c
        ORDER BY a.app_id, c;
    END IF;
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION parley_webhook_message_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_ARGV[0] = 'after_revoke' THEN
        PERFORM parley_queue_webhook(NEW.app_id, 'after_revoke', NEW.conversation_id, json_build_object(
            'messageId', NEW.id::text, 'conversationId', NEW.conversation_id, 'seq', NEW.seq,
            'fromId', NEW.from_id, 'operatorId', NEW.revoked_by,
            'revokedAt', floor(extract(epoch FROM NEW.revoked_at) * 1000)::bigint));
    ELSE
        INSERT INTO webhook_jobs (app_id, event, ordering_key, messages)
        SELECT NEW.app_id, 'after_edit', CASE WHEN w.batch_size > 1 THEN '*' ELSE NEW.conversation_id END,
               ARRAY[parley_webhook_message(NEW)]
        FROM app_webhooks w
        WHERE w.app_id = NEW.app_id AND w.enabled AND 'after_edit' = ANY (w.events);
    END IF;
    RETURN NULL;
END;
$$;

-- Only the after_send trigger used it; it now reads the settings itself.
DROP FUNCTION parley_webhook_wanted(text);
