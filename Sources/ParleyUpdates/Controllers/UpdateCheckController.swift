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
            let query = try UpdateCheckQuery(query: request.head.query)
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
            let query = try UpdateCheckQuery(query: request.head.query)
            var subject = query.deviceId.map { "d:" + $0 }
            if request.headers.contains(name: "authorization"),
               let verified = try? await auth.authenticator.authenticate(request, audience: .api, consent: .exempt) {
                subject = "u:" + verified.principal.userId
            }
            return Self.respond(try await cache.releases(appId: app.id), query: query, subject: subject, request: request)
        }
    }

    static func respond(_ releases: AppReleases, query: UpdateCheckQuery, subject: String?,
                        request: HTTPRequest) -> HTTPResponse {
        releases.answer(platform: query.platform, channel: query.channel, versionCode: query.versionCode, subject: subject)
            .response(ifNoneMatch: request.headers["if-none-match"])
    }
}

/// The validated query of an update check (1002 naming the bad parameter).
struct UpdateCheckQuery {
    var platform: String
    var channel: String
    var versionCode: Int64
    var deviceId: String?

    /// Reads the raw query string in one pass over its bytes (the first value of a repeated name wins, as in
    /// `HTTPRequest.queryParameters`); only values with escapes are percent-decoded. No array is built: this runs
    /// on every app start (profiled: a `split`-based version was half the handler's cost).
    init(query: String?) throws(APIError) {
        var platform, versionCode, channel, deviceId: String? // Self.names' order
        func isSet(_ slot: Int) -> Bool {
            switch slot {
            case 0: platform != nil
            case 1: versionCode != nil
            case 2: channel != nil
            default: deviceId != nil
            }
        }
        func set(_ slot: Int, _ value: String) {
            switch slot {
            case 0: platform = value
            case 1: versionCode = value
            case 2: channel = value
            default: deviceId = value
            }
        }
        if var query {
            let malformed = query.withUTF8 { bytes -> Bool in
                var start = 0
                while start < bytes.count {
                    var end = start
                    var equals = -1
                    while end < bytes.count && bytes[end] != UInt8(ascii: "&") {
                        if equals < 0 && bytes[end] == UInt8(ascii: "=") { equals = end }
                        end += 1
                    }
                    let nameEnd = equals < 0 ? end : equals
                    if let slot = Self.slot(UnsafeBufferPointer(rebasing: bytes[start..<nameEnd])), !isSet(slot) {
                        let raw = UnsafeBufferPointer(rebasing: bytes[(equals < 0 ? end : equals + 1)..<end])
                        if raw.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) {
                            guard let decoded = PercentDecoding.decode(String(decoding: raw, as: UTF8.self),
                                                                       plusAsSpace: true) else { return true }
                            set(slot, decoded)
                        } else {
                            set(slot, String(decoding: raw, as: UTF8.self))
                        }
                    }
                    start = end + 1
                }
                return false
            }
            if malformed { throw APIError.validationFailed.with(message: "malformed percent-encoding in the query") }
        }
        guard let platform, !platform.isEmpty else {
            throw APIError.validationFailed.with(message: "missing query parameter `platform`")
        }
        self.platform = try ReleaseInput.platform(platform)
        self.versionCode = try ReleaseInput.versionCode(query: versionCode)
        self.channel = try ReleaseInput.channel(channel)
        self.deviceId = try ReleaseInput.deviceID(deviceId)
    }

    private static let names: [[UInt8]] = ["platform", "versionCode", "channel", "deviceId"].map { Array($0.utf8) }

    /// The index in `names` of a parameter name, or nil for names the route does not read.
    private static func slot(_ name: UnsafeBufferPointer<UInt8>) -> Int? {
        for (index, candidate) in names.enumerated() where candidate.count == name.count {
            if candidate.elementsEqual(name) { return index }
        }
        return nil
    }
}
