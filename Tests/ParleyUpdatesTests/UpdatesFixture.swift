import Foundation
import ParleyAuth
import ParleyCrypto
import ParleyLiveSupport

/// A live server with one app, and helpers to publish releases (signed, as the app's backend would) and to check
/// for updates (as the app would).
struct UpdatesFixture {
    let live: LiveApp
    let app: AppSettings
    let secret: String
    let client: TestClient

    static func run(_ body: (UpdatesFixture) async throws -> Void) async throws {
        try await withLiveApp { live in
            let (app, secret) = try await live.createApp(name: "Updates")
            try await body(UpdatesFixture(live: live, app: app, secret: secret, client: live.client()))
        }
    }

    /// Another app on the same server.
    func otherApp(name: String = "Other") async throws -> UpdatesFixture {
        let (app, secret) = try await live.createApp(name: name)
        return UpdatesFixture(live: live, app: app, secret: secret, client: client)
    }

    /// A request signed with the app secret (see `RequestSignature`), or tampered with by `tamper`.
    func signed(
        _ method: String, _ target: String, json: [String: Any]? = nil, secret: String? = nil,
        tamper: (inout [String: String]) -> Void = { _ in }
    ) async throws -> TestResponse {
        let body = try json.map { Array(try JSONSerialization.data(withJSONObject: $0)) } ?? []
        var headers = LiveApp.signedHeaders(
            appKey: app.appKey, secret: secret ?? self.secret, method: method, target: target, body: body)
        tamper(&headers)
        return try await client.send(method, target, headers: headers, body: body)
    }

    /// Publishes a release (defaults: ios, default channel, full rollout, an App Store URL); the answer as sent.
    func publish(
        _ versionCode: Int64, platform: String = "ios", channel: String? = nil, versionName: String? = nil,
        minSupported: Int64? = nil, rollout: Int? = nil, extra: [String: Any] = [:]
    ) async throws -> TestResponse {
        var json: [String: Any] = [
            "platform": platform, "versionCode": versionCode,
            "versionName": versionName ?? "1.0.\(versionCode)",
            "releaseNotes": "Build \(versionCode)",
            "appStoreUrl": "https://apps.apple.com/app/id123",
        ]
        if let channel { json["channel"] = channel }
        if let minSupported { json["minSupportedVersionCode"] = minSupported }
        if let rollout { json["rolloutPercent"] = rollout }
        json.merge(extra) { _, new in new }
        return try await signed("POST", "/api/admin/releases", json: json)
    }

    /// Publishes and returns the new release's id (fails the test unless it was created).
    @discardableResult
    func publishOK(
        _ versionCode: Int64, platform: String = "ios", channel: String? = nil, minSupported: Int64? = nil,
        rollout: Int? = nil
    ) async throws -> Int64 {
        let response = try await publish(
            versionCode, platform: platform, channel: channel, minSupported: minSupported,
            rollout: rollout)
        guard response.status == 201, let id = response.data["id"] as? Int else {
            throw TestFailure("publish \(versionCode) failed: \(response.status) \(response.text)")
        }
        return Int64(id)
    }

    /// `GET /api/update/check` as the app calls it.
    func check(
        _ versionCode: Int64?, platform: String? = "ios", channel: String? = nil, deviceId: String? = nil,
        token: String? = nil, headers: [String: String] = [:], appKey: String? = nil
    ) async throws -> TestResponse {
        var query: [String] = []
        if let platform { query.append("platform=\(platform)") }
        if let versionCode { query.append("versionCode=\(versionCode)") }
        if let channel { query.append("channel=\(channel)") }
        if let deviceId { query.append("deviceId=\(deviceId)") }
        var headers = headers
        headers["X-App-Key"] = headers["X-App-Key"] ?? appKey ?? app.appKey
        return try await client.get("/api/update/check?" + query.joined(separator: "&"), token: token, headers: headers)
    }
}

extension TestResponse {
    var needsUpdate: Bool? { data["needsUpdate"] as? Bool }
    var forceUpdate: Bool? { data["forceUpdate"] as? Bool }
    var info: [String: Any]? { data["info"] as? [String: Any] }
    /// The offered release's versionCode, nil when there is no update.
    var offeredVersion: Int64? { (info?["versionCode"] as? Int).map(Int64.init) }
}
