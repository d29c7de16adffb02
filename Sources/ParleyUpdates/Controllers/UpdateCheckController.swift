import Foundation
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
        // The steady state answers synchronously, without a task: the app, a token's claims and the releases are
        // all in memory. Anything else (an app or releases not loaded yet, a token that does not verify here)
        // returns nil and takes the async handler, which gives the same answers.
        let immediate: HTTPImmediateHandler = { request, _ in
            guard let key = request.headers["x-app-key"], let app = auth.directory.app(key: key) else { return nil }
            let query = try UpdateCheckQuery(request.query)
            var subject = query.deviceId.map { "d:" + $0 }
            if request.headers.contains(name: "authorization") {
                guard let verified = auth.authenticator.authenticateInMemory(request) else { return nil }
                subject = "u:" + verified.principal.userId
            }
            guard let releases = cache.fresh(appId: app.id) else { return nil }
            return Self.respond(releases, query: query, subject: subject, request: request)
        }
        router.get("/api/update/check", immediate: immediate) { request, _ in
            let app = try await auth.requireApp(of: request)
            let query = try UpdateCheckQuery(request.query)
            var subject = query.deviceId.map { "d:" + $0 }
            if request.headers.contains(name: "authorization"),
                let verified = try? await auth.authenticator.authenticate(request, audience: .api, consent: .exempt)
            {
                subject = "u:" + verified.principal.userId
            }
            return Self.respond(
                try await cache.releases(appId: app.id), query: query, subject: subject, request: request)
        }
    }

    static func respond(
        _ releases: AppReleases, query: UpdateCheckQuery, subject: String?,
        request: HTTPRequest
    ) -> HTTPResponse {
        releases.answer(
            platform: query.platform, channel: query.channel, versionCode: query.versionCode, subject: subject
        )
        .response(ifNoneMatch: request.headers["if-none-match"])
    }
}

/// The validated query of an update check (1002 naming the bad parameter); read with `HTTPQuery`, which scans the
/// query in place (this runs on every app start).
struct UpdateCheckQuery {
    var platform: String
    var channel: String
    var versionCode: Int64
    var deviceId: String?

    init(_ query: HTTPQuery) throws(APIError) {
        let platform = try query.value(for: "platform")
        let versionCode = try query.value(for: "versionCode")
        let channel = try query.value(for: "channel")
        let deviceId = try query.value(for: "deviceId")
        guard let platform, !platform.isEmpty else {
            throw APIError.validationFailed.with(message: "missing query parameter `platform`")
        }
        self.platform = try ReleaseInput.platform(String(platform))
        self.versionCode = try ReleaseInput.versionCode(query: versionCode.map(String.init))
        self.channel = try ReleaseInput.channel(channel.map(String.init))
        self.deviceId = try ReleaseInput.deviceID(deviceId.map(String.init))
    }
}
