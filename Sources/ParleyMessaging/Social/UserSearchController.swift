import ParleyAuth
import ParleyHTTP

/// `GET /api/users/search`: users of the caller's app by exact username or id, or nickname prefix, paged.
struct UserSearchController: Sendable {
    let authenticator: Authenticator
    let repository: UserSearchRepository

    func register(on router: inout Router) {
        let repository = repository
        router.get(
            "/api/users/search",
            authenticator.protect { request, _, principal in
                let query = try UserSearchQuery(request.query)
                return .ok(try await repository.search(query, appId: principal.appId, callerId: principal.userId))
            })
    }
}
