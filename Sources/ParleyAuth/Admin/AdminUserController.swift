import ParleyHTTP
import ParleyJSON

/// The app's backend managing its users: server-to-server routes signed with the app secret (see "Signed
/// server-to-server requests" in openapi.yaml), each acting on the signing app's users only (another app's user is
/// not found, 1050).
struct AdminUserController: Sendable {
    let services: AuthServices
    let statistics: AdminStatistics
    let contributors: [StatisticsContributor]

    /// 100 users with the largest `ex` fit.
    static let importLimit = RouteOptions(bodyLimit: 1024 * 1024)

    func register(on router: inout Router) {
        let service = AdminUserService(services: services)
        let signatures = services.signatures
        router.post("/api/admin/users", options: Self.importLimit) { request, context in
            let app = try await signatures.verify(request)
            let body = try AdminUserImport(body: request.bodyBytes)
            let results = try await service.importUsers(body, app: app, logger: context.logger)
            return .ok(
                ImportAnswer(
                    results: results, created: results.count { $0.status == .created },
                    updated: results.count { $0.status == .updated }, failed: results.count { $0.status == .failed }))
        }
        router.get("/api/admin/users/{userId}") { request, context in
            let app = try await signatures.verify(request)
            return .ok(try await service.user(appId: app.id, userId: try Self.userID(context)))
        }
        router.patch("/api/admin/users/{userId}", options: AuthController.bodyLimit) { request, context in
            let app = try await signatures.verify(request)
            let userId = try Self.userID(context)
            let update = try ProfileUpdate(body: request.bodyBytes)
            return .ok(try await service.update(update, appId: app.id, userId: userId))
        }
        router.delete("/api/admin/users/{userId}") { request, context in
            let app = try await signatures.verify(request)
            let userId = try Self.userID(context)
            let ended = try await service.delete(appId: app.id, userId: userId)
            return .ok(UserAnswer(userId: userId, endedSessions: ended, deleted: true))
        }
        router.post("/api/admin/users/{userId}/ban") { request, context in
            let app = try await signatures.verify(request)
            let userId = try Self.userID(context)
            let ended = try await service.ban(appId: app.id, userId: userId)
            return .ok(UserAnswer(userId: userId, endedSessions: ended, banned: true))
        }
        router.post("/api/admin/users/{userId}/unban") { request, context in
            let app = try await signatures.verify(request)
            let userId = try Self.userID(context)
            try await service.unban(appId: app.id, userId: userId)
            return .ok(UserAnswer(userId: userId, endedSessions: 0, banned: false))
        }
        router.post("/api/admin/users/{userId}/logout", options: AuthController.bodyLimit) { request, context in
            let app = try await signatures.verify(request)
            let userId = try Self.userID(context)
            let sessionId = try Self.sessionID(request.bodyBytes)
            let ended = try await service.logout(appId: app.id, userId: userId, sessionId: sessionId)
            return .ok(UserAnswer(userId: userId, endedSessions: ended))
        }
        let statistics = statistics
        let contributors = contributors
        router.get("/api/admin/stats") { request, _ in
            let app = try await signatures.verify(request)
            let days = Int(try request.query.integer(for: "days", in: 1...Int64(AdminStatistics.maxDays)) ?? 7)
            return .ok(
                json: try await statistics.read(appId: app.id, days: days, contributors: contributors)
                    .serialized())
        }
    }

    static func userID(_ context: RequestContext) throws(APIError) -> String {
        try AuthInput.userID(try context.parameter("userId"))
    }

    /// `{sessionId?}`, or no body at all: every session.
    static func sessionID(_ bytes: [UInt8]) throws(APIError) -> String? {
        guard !bytes.isEmpty else { return nil }
        guard case .object(let body) = try AuthInput.jsonBody(bytes) else {
            throw APIError.validationFailed.with(message: "request body must be a JSON object")
        }
        switch body["sessionId"] {
        case nil, .null?: return nil
        case .string(let id)?
        where (1...128).contains(id.utf8.count) && id.utf8.allSatisfy(Validation.isIdentifierByte):
            return id
        default: throw APIError.validationFailed.with(message: "`sessionId` must be a session id")
        }
    }

    struct ImportAnswer: Encodable {
        var results: [AdminImportResult]
        var created: Int
        var updated: Int
        var failed: Int
    }

    struct UserAnswer: Encodable {
        var userId: String
        var endedSessions: Int
        var banned: Bool?
        var deleted: Bool?
    }
}
