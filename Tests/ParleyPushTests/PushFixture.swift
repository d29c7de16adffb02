import Foundation
import ParleyAuth
import ParleyCrypto
import ParleyLiveSupport
import ParleyPostgres
import ParleyPush
import ParleyTestSupport

/// A live server with one push-enabled app whose APNs endpoint is a mock, and helpers for tokens and jobs.
struct PushFixture: Sendable {
    let messaging: MessagingFixture
    let mock: MockAPNs
    let provider: MockAPNs.Provider
    static let bundleId = "com.example.chat"

    var live: LiveApp { messaging.live }
    var client: TestClient { messaging.client }
    var appId: Int64 { messaging.appId }
    var database: PostgresClient { messaging.database }

    /// Workers poll every 50 ms, so a push arrives within a fraction of a second.
    static let fastPolling = ["PARLEY_PUSH_POLL_MS": "50"]

    static func run<T>(
        environment: [String: String] = fastPolling, preview: PushPreview = .full,
        _ body: (PushFixture) async throws -> T
    ) async throws -> T {
        let provider = MockAPNs.Provider(keyId: "KEY0000001", teamId: "TEAM000001", key: try P256.SigningKey.generate())
        let mock = try await MockAPNs(providers: [provider])
        defer { mock.stop() }
        return try await MessagingFixture.run(environment: environment) { messaging in
            let fixture = PushFixture(messaging: messaging, mock: mock, provider: provider)
            try await fixture.configure(appId: messaging.appId, provider: provider, preview: preview)
            return try await body(fixture)
        }
    }

    /// Stores the app's push settings as `parley app push` does (the key sealed under the server's master key).
    func configure(
        appId: Int64, provider: MockAPNs.Provider, preview: PushPreview = .full, enabled: Bool = true,
        on live: LiveApp? = nil
    ) async throws {
        let live = live ?? self.live
        var update = PushSettingsRepository.Update()
        update.enabled = enabled
        update.teamId = provider.teamId
        update.keyId = provider.keyId
        update.sealedKey = try PushKeyBox(masterKey: try MasterKey(parsing: live.masterKeyHex))
            .seal(pem: provider.key.pem, appId: appId)
        update.bundleId = Self.bundleId
        update.preview = preview
        update.endpoint = mock.endpoint
        try await PushSettingsRepository(database: live.app.database).update(appId: appId, update)
    }

    /// A random APNs token (64 hex digits) starting with `prefix`.
    static func token(_ prefix: String = "") -> String {
        prefix + Hex.encode(SecureRandom.bytes(32)).dropFirst(prefix.count)
    }

    @discardableResult
    func bind(
        _ session: Session, token: String, vendor: String = "apns", environment: String = "sandbox",
        bundleId: String? = nil
    ) async throws -> TestResponse {
        var body: [String: Any] = [
            "token": token, "vendor": vendor, "deviceId": "device-\(session.sessionId)",
            "environment": environment,
        ]
        if let bundleId { body["bundleId"] = bundleId }
        let response = try await client.post("/api/push/tokens", json: body, token: session.accessToken)
        guard response.status == 201 else { throw TestFailure("bind failed: \(response.status) \(response.text)") }
        return response
    }

    func jobCount() async throws -> Int {
        try await database.query("SELECT count(*) AS n FROM push_jobs")[0].decode("n", as: Int.self)
    }

    /// Waits until the outbox is empty (every job pushed, given up or dropped).
    func drained(timeout: Duration = .seconds(10)) async throws {
        guard try await eventually(timeout: timeout, { try await jobCount() == 0 }) != nil else {
            throw TestFailure("push jobs still queued: \(try await jobCount()); log:\n\(live.sink.capturedText)")
        }
    }

    func tokenOwner(_ token: String) async throws -> (userId: String, sessionId: String)? {
        try await database.query("SELECT user_id, session_id FROM push_tokens WHERE token = \(token)").first.map {
            (try $0.decode("user_id"), try $0.decode("session_id"))
        }
    }
}
