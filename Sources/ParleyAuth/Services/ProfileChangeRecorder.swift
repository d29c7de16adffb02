import ParleyPostgres

/// Records that a user's public profile changed, inside the transaction that changed it (so whoever must learn of
/// it does exactly when the change commits), and returns what to do once it committed (the live delivery). The
/// messaging feature implements it (the `profile` event to friends, 1:1 peers and the user's other devices); the
/// composition root passes it, so auth does not depend on messaging. Without one, nothing is told.
///
/// - Parameter origin: the `Principal.origin` of the request that made the change (it has the answer), when there
///   is one.
public typealias ProfileChangeRecorder =
    @Sendable (
        _ appId: Int64, _ profile: PublicProfile, _ origin: String?, _ connection: PostgresConnection
    ) async throws -> (@Sendable () -> Void)
