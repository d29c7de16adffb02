-- The upkeep of sync's change log (0041) one step per transaction. A pass took every lock it needed in one
-- transaction: a range attached (an exclusive lock on the overflow partition, held to the end), then the view
-- `sync_changes` replaced. A sync that had locked the view waited for the overflow partition, the pass waited for
-- the view, and PostgreSQL cancelled the syncs as deadlocked (a 500 to the client), under nothing more than a steady
-- stream of syncs during the first pass.
--
-- `parley_maintain_changes` now does one step and says whether it is finished; the caller calls it again, each call
-- its own transaction, so no step holds a lock while it asks for another one that readers take in the other order:
--   1. a range ahead, if one is due (the parent, then the overflow partition: readers' order);
--   2. else the oldest range past retention dropped (the parent, then the range: readers' order);
--   3. else the old rows deleted outside the ranges and, once the old table is empty, the view redefined and the old
--      table dropped (the view first, as readers lock it); finished.
-- The rules (sizes, retention, `sync_horizon.pruned_through`) are those of 0041.
DROP FUNCTION parley_maintain_changes(integer, interval, bigint);
CREATE FUNCTION parley_maintain_changes(p_retention_days integer, p_span interval DEFAULT interval '1 day',
                                        p_min_width bigint DEFAULT 1000)
RETURNS TABLE (partitions_added integer, partitions_dropped integer, rows_deleted bigint,
               unpartitioned_dropped boolean, finished boolean)
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
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('parley:change-partitions', 0));
    PERFORM set_config('lock_timeout', '2s', true);
    partitions_added := 0;
    partitions_dropped := 0;
    rows_deleted := 0;
    unpartitioned_dropped := false;
    finished := false;

    -- 1. A range ahead.
    SELECT * INTO v_last FROM change_partitions ORDER BY xid_to DESC LIMIT 1;
    v_width := v_last.xid_to::text::bigint - v_last.xid_from::text::bigint;
    IF v_last.xid_to::text::bigint - v_next < v_width / 2 THEN
        v_elapsed := greatest(extract(epoch FROM clock_timestamp() - v_last.created_at), 1);
        v_width := greatest(
            p_min_width,
            ceil((v_next - v_last.created_at_xid::text::bigint) / v_elapsed * extract(epoch FROM p_span))::bigint,
            -- Past the next xid by half a width at least, so that one range catches up after a long pause.
            (v_next - v_last.xid_to::text::bigint) * 2);
        PERFORM parley_add_change_partition(
            'changes_x' || v_last.xid_to::text, v_last.xid_to,
            (v_last.xid_to::text::bigint + v_width)::text::xid8);
        partitions_added := 1;
        RETURN NEXT;
        RETURN;
    END IF;

    -- 2. The oldest range past retention. The newest range stays, and so does one a running transaction may still
    -- write to.
    SELECT * INTO v_oldest FROM change_partitions ORDER BY xid_from LIMIT 1;
    IF v_oldest.name <> v_last.name AND v_oldest.xid_to::text::bigint <= v_xmin THEN
        EXECUTE format('SELECT max(created_at) FROM %I', v_oldest.name) INTO v_newest_row;
        IF v_newest_row IS NULL OR v_newest_row < v_cutoff THEN
            BEGIN
                EXECUTE format('DROP TABLE %I', v_oldest.name);
                DELETE FROM change_partitions WHERE name = v_oldest.name;
                -- An empty range took no change with it: cursors in it missed nothing.
                IF v_newest_row IS NOT NULL THEN
                    UPDATE sync_horizon
                    SET pruned_through = greatest(pruned_through, (v_oldest.xid_to::text::bigint - 1)::text::xid8),
                        pruned_at = now();
                END IF;
                partitions_dropped := 1;
                RETURN NEXT;
                RETURN;
            EXCEPTION WHEN lock_not_available THEN
                -- Busy: a later pass drops it. The rest of this one still runs.
                NULL;
            END;
        END IF;
    END IF;

    -- 3. Old rows outside the ranges, and the old table once it is empty.
    WITH gone AS (
        DELETE FROM changes_overflow WHERE created_at < v_cutoff RETURNING xid)
    SELECT count(*), max(xid::text::bigint) INTO rows_deleted, v_pruned FROM gone;
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
    finished := true;
    RETURN NEXT;
END;
$$;
