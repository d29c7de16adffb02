import ParleyAuth
import ParleyHTTP

/// `GET /api/admin/users/{userId}/push-attempts`: the user's last pushes and what each vendor answered, newest
/// first, for the app's troubleshooting console. Signed by the app's backend like every admin route.
struct PushAttemptController: Sendable {
    let verifySignedRequest: @Sendable (HTTPRequest) async throws -> AppSettings
    let attempts: PushAttemptRepository

    func register(on router: inout Router) {
        let verify = verifySignedRequest
        let attempts = attempts
        router.get("/api/admin/users/{userId}/push-attempts") { request, context in
            let app = try await verify(request)
            let userId = try context.parameter("userId")
            guard Validation.isValidUserID(userId) else {
                throw APIError.validationFailed.with(message: "`userId` must be 1-64 of [A-Za-z0-9_.@-]")
            }
            guard try await attempts.userExists(appId: app.id, userId: userId) else {
                throw APIError.adminUserNotFound
            }
            return .ok(PushAttemptsAnswer(attempts: try await attempts.attempts(appId: app.id, userId: userId)))
        }
    }
}

struct PushAttemptsAnswer: Encodable, Sendable {
    var attempts: [PushAttempt]
}
