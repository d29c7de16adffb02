import ParleyAuth
import ParleyHTTP
import ParleyPostgres

/// `GET /api/users/search`: users of the caller's app by exact username or id, or nickname prefix, paged.
struct UserSearchController: Sendable {
    let authenticator: Authenticator
    let repository: UserSearchRepository
    /// Search tolerates replica lag.
    let reads: PostgresReadRouter

    func register(on router: inout Router) {
        let repository = repository
        let reads = reads
        router.get(
            "/api/users/search",
            authenticator.protect { request, _, principal in
                let query = try UserSearchQuery(request.query)
                return .ok(
                    try await reads.read { database in
                        try await repository.on(database).search(
                            query, appId: principal.appId, callerId: principal.userId)
                    })
            })
    }
}
