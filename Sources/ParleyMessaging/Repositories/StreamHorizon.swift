import ParleyPostgres

/// The horizon a stream cursor (sync's, the friend list's) advances to: the statement snapshot's xmin, which no
/// transaction still running or yet to start is below.
///
/// That holds across a crash only if the xids below the horizon stay used: PostgreSQL gives out again the xids whose
/// WAL never reached the disk (rolled-back transactions, say), and a cursor past one of them would skip what a later
/// transaction commits under it. So a horizon read on the primary is handed out only after a commit that began later
/// has been flushed (`PostgresClient.flushTransactionIDs`, shared by the reads of the moment). A standby's needs
/// nothing: its snapshots are built from WAL the primary had flushed before sending it.
enum StreamHorizon {
    /// The select-list items `xmin` (the horizon) and `on_standby`.
    static let columns = "pg_snapshot_xmin(pg_current_snapshot()) AS xmin, pg_is_in_recovery() AS on_standby"

    /// Call with the row that read `columns` (as `on_standby`) from `database`, and the horizon it read, before
    /// handing that out.
    static func settle(_ row: PostgresRow, horizon: UInt64, on database: PostgresClient) async throws {
        if try !row.decode("on_standby", as: Bool.self) {
            try await database.flushTransactionIDs(below: horizon)
        }
    }
}
