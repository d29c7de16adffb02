import ParleyAuth
import ParleyHTTP

/// `GET /api/update/check?platform=ios&versionCode=123[&channel=beta][&deviceId=...]` with `X-App-Key`, called at
/// every app start. An access token is optional: when one is sent and valid for the app, the user id draws the
/// rollout bucket; otherwise `deviceId` does (an invalid or expired token is ignored, not refused: an app checks
/// for updates before it has logged in again). Answers come prepared from `ReleaseCache`: no query, no encoding.
struct UpdateCheckController: Sendable {
    let auth: AuthModule
    let cache: ReleaseCache

    func register(on router: inout Router) {
        let auth = auth
        let cache = cache
        router.get("/api/update/check") { request, _ in
            let app = try await auth.requireApp(of: request)
            let query = try UpdateCheckQuery(request.queryParameters)
            var subject = query.deviceId.map { "d:" + $0 }
            if request.headers.contains(name: "authorization"),
               let verified = try? await auth.authenticator.authenticate(request, audience: .api, consent: .exempt) {
                subject = "u:" + verified.principal.userId
            }
            let releases = try await cache.releases(appId: app.id)
            let answer = releases.answer(platform: query.platform, channel: query.channel,
                                         versionCode: query.versionCode, subject: subject)
            return answer.response(ifNoneMatch: request.headers["if-none-match"])
        }
    }
}

/// The validated query of an update check (1002 naming the bad parameter).
struct UpdateCheckQuery {
    var platform: String
    var channel: String
    var versionCode: Int64
    var deviceId: String?

    init(_ query: [String: String]) throws(APIError) {
        guard let platform = query["platform"], !platform.isEmpty else {
            throw APIError.validationFailed.with(message: "missing query parameter `platform`")
        }
        self.platform = try ReleaseInput.platform(platform)
        versionCode = try ReleaseInput.versionCode(query: query["versionCode"])
        channel = try ReleaseInput.channel(query["channel"])
        deviceId = try ReleaseInput.deviceID(query["deviceId"])
    }
}
