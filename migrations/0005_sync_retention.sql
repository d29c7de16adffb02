-- Sync keeps the changes log (read marks, revokes, edits, per-user changes) for a retention period
-- (PARLEY_IM_SYNC_RETENTION_DAYS), not forever: read marks alone write a row per read. A cursor older than
-- what was pruned is answered 1116 (the client reloads its conversations and history and syncs afresh).
-- Messages themselves are history and are not pruned.

CREATE TABLE sync_horizon (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    -- Rows with xid at or below this were deleted: a cursor whose xid is not above it may have missed some.
    pruned_through xid8 NOT NULL DEFAULT '0'::xid8,
    pruned_at timestamptz
);
INSERT INTO sync_horizon DEFAULT VALUES;

CREATE INDEX changes_created_at ON changes (created_at);
