import ParleyHTTP

/// The signed-in user's sessions: logout, logout everywhere, list, end one. None of these waits for privacy
/// consent: ending sessions is a security control and must always work.
struct SessionController: Sendable {
    let services: AuthServices

    func register(on router: inout Router) {
        let auth = services.authenticator
        let sessions = services.sessions
        router.post(
            "/api/auth/logout",
            auth.protect(consent: .exempt) { _, _, principal in
                try await sessions.end(
                    appId: principal.appId, userId: principal.userId, sessionId: principal.sessionId,
                    reason: .logout)
                return .ok()
            })
        router.post(
            "/api/auth/logout-all",
            auth.protect(consent: .exempt) { _, _, principal in
                let count = try await sessions.end(
                    appId: principal.appId, userId: principal.userId, sessionId: nil,
                    reason: .logout)
                return .ok(["endedSessions": count])
            })
        router.get(
            "/api/auth/sessions",
            auth.protect(consent: .exempt) { _, _, principal in
                let list = try await sessions.sessions.listActive(
                    appId: principal.appId, userId: principal.userId,
                    currentSessionId: principal.sessionId)
                return .ok(["sessions": list])
            })
        router.delete(
            "/api/auth/sessions/{id}",
            auth.protect(consent: .exempt) { _, context, principal in
                let id = try context.parameter("id")
                // Scoped to the caller's own sessions: another user's (or app's) session id is simply not found.
                let count = try await sessions.end(
                    appId: principal.appId, userId: principal.userId, sessionId: id,
                    reason: .revoked)
                guard count > 0 else { throw APIError.notFound.with(message: "no active session \(id)") }
                return .ok()
            })
    }
}
