-- The sync change log (`changes`: read marks, revokes, edits, per-user events) as declarative partitions by ranges of
-- transaction id (xid). Sync reads it by cursor, and a cursor is an (xid, id) position, so a sync reads only the
-- partitions at or after its cursor: old partitions are never probed, each partition's indexes stay small, and
-- retention drops a whole partition instead of deleting its rows one by one.
--
-- Converted online, with no scan of the existing rows: the old table is renamed `changes_unpartitioned` and kept as it
-- is; sync reads both through the view `sync_changes` until retention has emptied the old table, which
-- `parley_maintain_changes` then drops (the view then reads `changes` alone). New rows go to the partitions from the
-- moment this migration commits.
--
-- Partitions: `changes_overflow` (the DEFAULT partition) takes any row no range covers, so an insert never fails;
-- `parley_maintain_changes` (run by the deployment's coordinator every few minutes) keeps ranges ahead of the xids in
-- use, each sized to about a day of the recent xid rate, and moves rows that reached the overflow partition into the
-- range created for them. `change_partitions` lists the ranges.

ALTER TABLE changes RENAME TO changes_unpartitioned;
ALTER INDEX changes_by_conversation RENAME TO changes_unpartitioned_by_conversation;
ALTER INDEX changes_by_user RENAME TO changes_unpartitioned_by_user;
ALTER INDEX changes_created_at RENAME TO changes_unpartitioned_created_at;

CREATE TABLE changes (LIKE changes_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE (xid);
CREATE INDEX changes_by_conversation ON changes (app_id, conversation_id, xid, id) WHERE user_id IS NULL;
CREATE INDEX changes_by_user ON changes (app_id, user_id, xid, id) WHERE user_id IS NOT NULL;
CREATE INDEX changes_created_at ON changes (created_at);
CREATE TABLE changes_overflow PARTITION OF changes DEFAULT;

CREATE TABLE change_partitions (
    name text PRIMARY KEY,
    xid_from xid8 NOT NULL,
    xid_to xid8 NOT NULL,
    -- When it was made, and the next xid then: the xid rate since then sizes the next range.
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    created_at_xid xid8 NOT NULL DEFAULT pg_snapshot_xmax(pg_current_snapshot())
);

-- What sync reads.
CREATE VIEW sync_changes AS
    SELECT id, app_id, conversation_id, user_id, kind, message_id, payload, xid, created_at FROM changes
    UNION ALL
    SELECT id, app_id, conversation_id, user_id, kind, message_id, payload, xid, created_at FROM changes_unpartitioned;

-- Adds the range [p_from, p_to) as partition `p_name`, with the rows the overflow partition holds for it (normally
-- none: the overflow partition is scanned, which is cheap while it is empty).
CREATE FUNCTION parley_add_change_partition(p_name text, p_from xid8, p_to xid8) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('CREATE TABLE %I (LIKE changes INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', p_name);
    EXECUTE format(
        'WITH moved AS (DELETE FROM changes_overflow WHERE xid >= %L::xid8 AND xid < %L::xid8 RETURNING *) '
        'INSERT INTO %I SELECT * FROM moved', p_from, p_to, p_name);
    EXECUTE format('ALTER TABLE changes ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', p_name, p_from, p_to);
    INSERT INTO change_partitions (name, xid_from, xid_to) VALUES (p_name, p_from, p_to);
END;
$$;

-- The first range starts at the next xid to be assigned: every row of an earlier transaction is either in the old
-- table or, if it is written after this commits, in the overflow partition (both are read, and aged out by time).
-- It is small on purpose: the first maintenance run sizes the next ones from the measured xid rate.
DO $$
DECLARE
    v_from xid8 := pg_snapshot_xmax(pg_current_snapshot());
BEGIN
    PERFORM parley_add_change_partition(
        'changes_x' || v_from::text, v_from, (v_from::text::bigint + 1000)::text::xid8);
END;
$$;

-- One maintenance pass; returns what it did. Serialized by an advisory lock (a second caller waits).
--   * Ranges ahead: while the newest range has less than half of its width left before the next xid, a range is
--     added after it, sized to the xids used over about p_span (measured since the newest range was made), at least
--     p_min_width. Rows that reached the overflow partition move into the range made for them.
--   * Retention: the oldest ranges whose rows are all older than p_retention_days (or that are empty), and that no
--     transaction can still write to (below the oldest running transaction), are dropped, oldest first;
--     `sync_horizon.pruned_through` records the last xid of the last one that held changes (a cursor at or below it
--     answers 1116). Rows of the old table and of the
--     overflow partition older than that are deleted, as before partitioning.
--   * Once the old table is empty it is dropped and `sync_changes` reads the partitions alone.
-- Adding or dropping a range takes brief exclusive locks (on the overflow partition, on `changes`); a lock_timeout
-- keeps a pass from queueing writers behind a long statement: what it could not do, a later pass does.
CREATE FUNCTION parley_maintain_changes(p_retention_days integer, p_span interval DEFAULT interval '1 day',
                                        p_min_width bigint DEFAULT 1000)
RETURNS TABLE (partitions_added integer, partitions_dropped integer, rows_deleted bigint, unpartitioned_dropped boolean)
LANGUAGE plpgsql AS $$
DECLARE
    v_next bigint := pg_snapshot_xmax(pg_current_snapshot())::text::bigint;
    v_xmin bigint := pg_snapshot_xmin(pg_current_snapshot())::text::bigint;
    v_cutoff timestamptz := now() - make_interval(days => p_retention_days);
    v_last change_partitions;
    v_oldest change_partitions;
    v_width bigint;
    v_elapsed double precision;
    v_newest_row timestamptz;
    v_pruned bigint;
    v_guard integer := 0;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('parley:change-partitions', 0));
    PERFORM set_config('lock_timeout', '2s', true);
    partitions_added := 0;
    partitions_dropped := 0;
    rows_deleted := 0;
    unpartitioned_dropped := false;

    LOOP
        SELECT * INTO v_last FROM change_partitions ORDER BY xid_to DESC LIMIT 1;
        v_width := v_last.xid_to::text::bigint - v_last.xid_from::text::bigint;
        EXIT WHEN v_last.xid_to::text::bigint - v_next >= v_width / 2;
        v_guard := v_guard + 1;
        EXIT WHEN v_guard > 8;
        v_elapsed := greatest(extract(epoch FROM clock_timestamp() - v_last.created_at), 1);
        v_width := greatest(
            p_min_width,
            ceil((v_next - v_last.created_at_xid::text::bigint) / v_elapsed * extract(epoch FROM p_span))::bigint,
            -- Past the next xid by half a width at least, so that one range catches up after a long pause.
            (v_next - v_last.xid_to::text::bigint) * 2);
        PERFORM parley_add_change_partition(
            'changes_x' || v_last.xid_to::text, v_last.xid_to,
            (v_last.xid_to::text::bigint + v_width)::text::xid8);
        partitions_added := partitions_added + 1;
    END LOOP;

    v_pruned := NULL;
    LOOP
        SELECT * INTO v_oldest FROM change_partitions ORDER BY xid_from LIMIT 1;
        -- The newest range stays, and so does one a running transaction may still write to.
        EXIT WHEN v_oldest.name = v_last.name OR v_oldest.xid_to::text::bigint > v_xmin;
        EXECUTE format('SELECT max(created_at) FROM %I', v_oldest.name) INTO v_newest_row;
        EXIT WHEN v_newest_row IS NOT NULL AND v_newest_row >= v_cutoff;
        BEGIN
            EXECUTE format('DROP TABLE %I', v_oldest.name);
        EXCEPTION WHEN lock_not_available THEN
            EXIT;
        END;
        DELETE FROM change_partitions WHERE name = v_oldest.name;
        -- An empty range took no change with it: cursors in it missed nothing.
        IF v_newest_row IS NOT NULL THEN
            v_pruned := v_oldest.xid_to::text::bigint - 1;
        END IF;
        partitions_dropped := partitions_dropped + 1;
    END LOOP;

    WITH gone AS (
        DELETE FROM changes_overflow WHERE created_at < v_cutoff RETURNING xid)
    SELECT count(*), greatest(v_pruned, max(xid::text::bigint)) INTO rows_deleted, v_pruned FROM gone;
    IF to_regclass('changes_unpartitioned') IS NOT NULL THEN
        DECLARE
            v_count bigint;
            v_max bigint;
        BEGIN
            WITH gone AS (
                DELETE FROM changes_unpartitioned WHERE created_at < v_cutoff RETURNING xid)
            SELECT count(*), max(xid::text::bigint) INTO v_count, v_max FROM gone;
            rows_deleted := rows_deleted + v_count;
            v_pruned := greatest(v_pruned, v_max);
            IF NOT EXISTS (SELECT 1 FROM changes_unpartitioned) THEN
                CREATE OR REPLACE VIEW sync_changes AS
                    SELECT id, app_id, conversation_id, user_id, kind, message_id, payload, xid, created_at
                    FROM changes;
                DROP TABLE changes_unpartitioned;
                unpartitioned_dropped := true;
            END IF;
        END;
    END IF;
    IF v_pruned IS NOT NULL THEN
        UPDATE sync_horizon SET pruned_through = greatest(pruned_through, v_pruned::text::xid8), pruned_at = now();
    END IF;
    RETURN NEXT;
END;
$$;
