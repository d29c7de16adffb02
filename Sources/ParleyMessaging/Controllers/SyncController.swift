import ParleyAuth
import ParleyHTTP

/// `GET /api/im/sync?cursor=...&limit=N`.
struct SyncController: Sendable {
    let authenticator: Authenticator
    let service: SyncService

    func register(on router: inout Router) {
        let service = service
        router.get(
            "/api/im/sync",
            authenticator.protect { request, _, principal in
                let query = request.query
                var cursor: SyncCursor?
                if let raw = try query.value(for: "cursor"), !raw.isEmpty {
                    guard let parsed = SyncCursor(String(raw)) else { throw APIError.invalidCursor }
                    cursor = parsed
                }
                let limit = try query.limit(
                    defaultLimit: SyncService.defaultPageSize, max: SyncService.maxPageSize)
                return .ok(try await service.sync(after: cursor, limit: limit, for: principal))
            })
    }
}
