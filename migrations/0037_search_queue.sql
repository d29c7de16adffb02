-- Message search off the send path (issue 22).
--
-- 0031 indexed `messages` itself: every stored text message ran the tokenizer and a GIN insert inside the sending
-- transaction. Side by side on one cluster (pgbench calling `parley_send_message`, two databases loaded at once, one
-- without the index), the index cost 11% of the sends PostgreSQL completes for short English texts and 25% for
-- Chinese ones. Now a send only queues the message's id (a statement trigger, one row per text message); a worker
-- (`MessageSearchIndexer`) tokenizes queued messages in batches into `message_search`, whose GIN index holds the same
-- terms 0031 described. A message becomes searchable within the worker's interval; a burst of sends is never slowed
-- by it, and the queue absorbs what the worker has not reached yet.
DROP INDEX messages_search;

-- Ids of messages to (re)index: stored text and rich text messages, edits and revokes. Any instance's worker takes
-- rows with SKIP LOCKED and deletes them in the transaction that writes their entries.
CREATE TABLE message_search_queue (
    message_id bigint PRIMARY KEY
);

-- One row per searchable message: its terms (see 0031), or no row (revoked, not text, deleted).
CREATE TABLE message_search (
    message_id bigint PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
    vector tsvector NOT NULL
);
CREATE INDEX message_search_terms ON message_search USING gin (vector);

CREATE FUNCTION parley_queue_search_inserts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO message_search_queue (message_id)
    SELECT m.id FROM stored_messages m WHERE m.msg_type IN ('text', 'richText')
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END;
$$;
CREATE TRIGGER messages_queue_search AFTER INSERT ON messages
REFERENCING NEW TABLE AS stored_messages
FOR EACH STATEMENT EXECUTE FUNCTION parley_queue_search_inserts();

-- Edits and revokes (rare: a row trigger; column lists exclude transition tables) change what is searchable.
CREATE FUNCTION parley_queue_search_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.msg_type IN ('text', 'richText') THEN
        INSERT INTO message_search_queue (message_id) VALUES (NEW.id) ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER messages_queue_search_change AFTER UPDATE OF content ON messages
FOR EACH ROW EXECUTE FUNCTION parley_queue_search_change();

-- What 0031's index held is indexed again by the worker.
INSERT INTO message_search_queue (message_id)
SELECT id FROM messages WHERE msg_type IN ('text', 'richText') AND revoked_at IS NULL;
