-- Message search reads `messages` only for the page it answers (issue 22). Each entry of `message_search` (0037) gets
-- its message's app, conversation, seq and time, so that a search filters, orders and pages its matches on them; a
-- revoke deletes the entry in its own statement. Entries written before this migration are completed from `messages`.
ALTER TABLE message_search
    ADD COLUMN app_id bigint,
    ADD COLUMN conversation_id text,
    ADD COLUMN seq bigint,
    ADD COLUMN created_at timestamptz;
UPDATE message_search s
SET app_id = m.app_id, conversation_id = m.conversation_id, seq = m.seq, created_at = m.created_at
FROM messages m
WHERE m.id = s.message_id;
ALTER TABLE message_search
    ALTER COLUMN app_id SET NOT NULL,
    ALTER COLUMN conversation_id SET NOT NULL,
    ALTER COLUMN seq SET NOT NULL,
    ALTER COLUMN created_at SET NOT NULL;

-- A 64 kB pending list, as 0031's: every search's bitmap scans read all of it (with the default 4 MB a search over
-- a freshly loaded index took tens of milliseconds more).
ALTER INDEX message_search_terms SET (fastupdate = on, gin_pending_list_limit = 64);
