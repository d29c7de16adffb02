import ParleyAuth
import ParleyHTTP

/// Publishing and managing releases: server-to-server routes signed with the app secret (see "Signed
/// server-to-server requests" in openapi.yaml). Each acts on the signing app's releases only.
struct ReleaseAdminController: Sendable {
    let auth: AuthModule
    let service: ReleaseService

    static let bodyLimit = RouteOptions(bodyLimit: 64 * 1024)

    func register(on router: inout Router) {
        let auth = auth
        let service = service
        router.post("/api/admin/releases", options: Self.bodyLimit) { request, _ in
            let app = try await auth.verifySignedRequest(request)
            let draft = try request.decodeJSON(PublishReleaseRequest.self).draft()
            return .ok(try await service.publish(appId: app.id, draft), status: 201)
        }
        router.get("/api/admin/releases") { request, _ in
            let app = try await auth.verifySignedRequest(request)
            let query = request.query
            let platform = try query.value(for: "platform").map { raw throws(APIError) in
                try ReleaseInput.platform(String(raw))
            }
            let channel = try query.value(for: "channel").map { raw throws(APIError) in
                try ReleaseInput.channel(String(raw))
            }
            let includeWithdrawn = try Self.flag(query.value(for: "includeWithdrawn"), field: "includeWithdrawn")
            let limit = try query.limit(defaultLimit: 100, max: ReleaseService.maxPageSize)
            let page = try await service.list(
                appId: app.id, platform: platform, channel: channel,
                includeWithdrawn: includeWithdrawn, limit: limit)
            return .ok(ReleasePage(releases: page.releases, hasMore: page.hasMore))
        }
        router.get("/api/admin/releases/{id}") { request, context in
            let app = try await auth.verifySignedRequest(request)
            return .ok(try await service.release(appId: app.id, id: try Self.releaseID(context)))
        }
        router.patch("/api/admin/releases/{id}", options: Self.bodyLimit) { request, context in
            let app = try await auth.verifySignedRequest(request)
            let id = try Self.releaseID(context)
            let changes = try request.decodeJSON(UpdateReleaseRequest.self).changes()
            return .ok(try await service.update(appId: app.id, id: id, changes))
        }
        // The row stays (history; its versionCode stays taken): DELETE withdraws it from update checks.
        router.delete("/api/admin/releases/{id}") { request, context in
            let app = try await auth.verifySignedRequest(request)
            return .ok(try await service.withdraw(appId: app.id, id: try Self.releaseID(context)))
        }
    }

    /// A release id is a positive decimal integer; anything else cannot exist (404, like an unknown id).
    static func releaseID(_ context: RequestContext) throws(APIError) -> Int64 {
        let raw = try context.parameter("id")
        guard raw.utf8.count <= 18, raw.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let id = Int64(raw), id > 0
        else { throw APIError.releaseNotFound }
        return id
    }

    static func flag(_ raw: Substring?, field: String) throws(APIError) -> Bool {
        switch raw {
        case nil, "", "false", "0": return false
        case "true", "1": return true
        default: throw APIError.validationFailed.with(message: "`\(field)` must be true or false")
        }
    }
}
