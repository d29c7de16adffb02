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
            // The steady state needs no suspension: the app and its releases are in memory.
            let app: AppSettings
            if let key = request.headers["x-app-key"], let known = auth.directory.app(key: key) {
                app = known
            } else {
                app = try await auth.requireApp(of: request)
            }
            let query = try UpdateCheckQuery(query: request.head.query)
            var subject = query.deviceId.map { "d:" + $0 }
            if request.headers.contains(name: "authorization"),
               let verified = try? await auth.authenticator.authenticate(request, audience: .api, consent: .exempt) {
                subject = "u:" + verified.principal.userId
            }
            let releases: AppReleases
            if let fresh = cache.fresh(appId: app.id) {
                releases = fresh
            } else {
                releases = try await cache.releases(appId: app.id)
            }
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

    /// Reads the raw query string in one pass (the first value of a repeated name wins, as in
    /// `HTTPRequest.queryParameters`); only values with escapes are percent-decoded.
    init(query: String?) throws(APIError) {
        var platform: String?
        var versionCode: String?
        var channel: String?
        var deviceId: String?
        if let query {
            for pair in query.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
                let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.endIndex
                let name = pair[pair.startIndex..<equals]
                let rawValue = equals == pair.endIndex ? pair[equals...] : pair[pair.index(after: equals)...]
                func value() throws(APIError) -> String {
                    let text = Substring(rawValue)
                    guard rawValue.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else {
                        return String(text)
                    }
                    guard let decoded = PercentDecoding.decode(text, plusAsSpace: true) else {
                        throw APIError.validationFailed.with(message: "malformed percent-encoding in the query")
                    }
                    return decoded
                }
                if platform == nil, name.elementsEqual("platform".utf8) {
                    platform = try value()
                } else if versionCode == nil, name.elementsEqual("versionCode".utf8) {
                    versionCode = try value()
                } else if channel == nil, name.elementsEqual("channel".utf8) {
                    channel = try value()
                } else if deviceId == nil, name.elementsEqual("deviceId".utf8) {
                    deviceId = try value()
                }
            }
        }
        guard let platform, !platform.isEmpty else {
            throw APIError.validationFailed.with(message: "missing query parameter `platform`")
        }
        self.platform = try ReleaseInput.platform(platform)
        self.versionCode = try ReleaseInput.versionCode(query: versionCode)
        self.channel = try ReleaseInput.channel(channel)
        self.deviceId = try ReleaseInput.deviceID(deviceId)
    }
}
