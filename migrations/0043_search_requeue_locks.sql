-- An edit or a revoke that raced the search indexer could leave a stale entry for good (0037): its trigger found the
-- message still queued and did nothing (ON CONFLICT DO NOTHING takes no lock), the indexer then took that queue row
-- and indexed the content its snapshot showed (before the edit committed), and nothing queued the message again.
-- The trigger now locks the queue row it finds (DO UPDATE): the indexer's batch, taken with SKIP LOCKED, passes over
-- it until the edit commits, and the next pass indexes what the message has become. A row the indexer took first
-- makes the trigger wait for the indexer's commit, after which the row is gone and the trigger queues the message
-- again.
CREATE OR REPLACE FUNCTION parley_queue_search_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.msg_type IN ('text', 'richText') THEN
        INSERT INTO message_search_queue (message_id) VALUES (NEW.id)
        ON CONFLICT (message_id) DO UPDATE SET message_id = EXCLUDED.message_id;
    END IF;
    RETURN NULL;
END;
$$;
