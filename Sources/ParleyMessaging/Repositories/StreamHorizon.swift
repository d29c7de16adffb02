/// The horizon a stream cursor (sync's, the friend list's) advances to: the statement snapshot's xmin, which no
/// transaction still running or yet to start is below.
///
/// That holds after a crash only if the xids below the horizon stay used. PostgreSQL gives out again the xids whose
/// WAL was never flushed (rolled back transactions, say), and a cursor past one of them would skip what a later
/// transaction commits under it. So on the primary the statement also writes a transactional WAL message: its
/// commit is then flushed, and recovery starts after the statement's own xid, which is at or above the horizon. A
/// standby needs nothing: its snapshots are built from WAL the primary had flushed before sending it.
enum StreamHorizon {
    /// The select-list items `xmin` (the horizon) and `flushed_by`. A query reads both, so that neither is left out.
    static let columns = """
        pg_snapshot_xmin(pg_current_snapshot()) AS xmin,
        CASE WHEN pg_is_in_recovery() THEN NULL
             ELSE pg_logical_emit_message(true, 'parley.stream_horizon', '') END AS flushed_by
        """
}
