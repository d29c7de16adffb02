import Foundation
import ParleyCrypto
import ParleyHTTP
import ParleyLiveSupport
import Testing

@testable import ParleyAuth

/// Server-to-server calls signed with the app secret: `POST /api/im/auth/login`.
@Suite("Signed server-to-server requests")
struct SignedRequestTests {
    /// Signs exactly as the issue specifies, independently of `RequestSignature`.
    static func sign(
        secret: String, method: String, target: String, timestamp: String, nonce: String,
        body: [UInt8]
    ) -> String {
        let text = "\(method)\n\(target)\n\(timestamp)\n\(nonce)\n\(Hex.encode(SHA256.hash(body)))"
        return Hex.encode(HMAC.sha256(key: Array(secret.utf8), message: Array(text.utf8)))
    }

    static func signedLogin(
        _ client: TestClient, appKey: String, secret: String, userId: String,
        bodyAppKey: String? = nil, platform: String? = nil,
        timestamp: Int64 = Int64(Date().timeIntervalSince1970), nonce: String = SecureRandom.token(bytes: 12),
        tamper: (inout [String: String]) -> Void = { _ in }
    ) async throws -> TestResponse {
        var json: [String: Any] = ["appKey": bodyAppKey ?? appKey, "userId": userId]
        if let platform { json["platform"] = platform }
        let body = Array(try JSONSerialization.data(withJSONObject: json))
        let target = "/api/im/auth/login"
        var headers = [
            "X-App-Key": appKey, "X-Timestamp": String(timestamp), "X-Nonce": nonce,
            "X-Signature": sign(
                secret: secret, method: "POST", target: target, timestamp: String(timestamp),
                nonce: nonce, body: body),
        ]
        tamper(&headers)
        return try await client.send("POST", target, headers: headers, body: body)
    }

    @Test func goodSignatureCreatesTheUserOnFirstUse() async throws {
        try await withLiveApp { live in
            let (app, secret) = try await live.createApp()
            let client = live.client()
            let first = try await Self.signedLogin(
                client, appKey: app.appKey, secret: secret, userId: "ext-42",
                platform: "android")
            #expect(first.status == 200)
            #expect(Set(first.data.keys) == SignedSessionTests.signedFields)
            let token = try #require(first.string("token"))
            let principal = try live.auth.authenticator.verifyIMToken(token)
            #expect(principal.userId == "ext-42")
            #expect(principal.appId == app.id)

            // Second call: the same user (not a new one); a different platform keeps the first session.
            let second = try await Self.signedLogin(
                client, appKey: app.appKey, secret: secret, userId: "ext-42",
                platform: "ios")
            #expect(second.status == 200)
            let users = try await live.app.database.query(
                "SELECT count(*) FROM users WHERE app_id = \(app.id) AND id = 'ext-42'")[0].decode(0, as: Int.self)
            #expect(users == 1)
            #expect(try live.auth.authenticator.verifyIMToken(token).sessionId == principal.sessionId)
        }
    }

    @Test func badSignatureOldTimestampAndReplayedNonceAreRefused() async throws {
        try await withLiveApp { live in
            let (app, secret) = try await live.createApp()
            let client = live.client()

            let wrongSecret = try await Self.signedLogin(client, appKey: app.appKey, secret: "as_wrong", userId: "u1")
            #expect(wrongSecret.status == 401)
            #expect(wrongSecret.code == 1038)
            #expect(wrongSecret.message == "request signature does not match")

            // Body changed after signing.
            let changedBody = try await Self.signedLogin(client, appKey: app.appKey, secret: secret, userId: "u1") {
                $0["X-Signature"] = Self.sign(
                    secret: secret, method: "POST", target: "/api/im/auth/login",
                    timestamp: $0["X-Timestamp"]!, nonce: $0["X-Nonce"]!, body: Array("{}".utf8))
            }
            #expect(changedBody.code == 1038)

            let old = try await Self.signedLogin(
                client, appKey: app.appKey, secret: secret, userId: "u1",
                timestamp: Int64(Date().timeIntervalSince1970) - 301)
            #expect(old.status == 401)
            #expect(old.code == 1038)
            #expect(old.message?.contains("300 seconds") == true)
            let future = try await Self.signedLogin(
                client, appKey: app.appKey, secret: secret, userId: "u1",
                timestamp: Int64(Date().timeIntervalSince1970) + 400)
            #expect(future.code == 1038)

            let nonce = "nonce-\(UUID().uuidString)"
            let once = try await Self.signedLogin(
                client, appKey: app.appKey, secret: secret, userId: "u1", nonce: nonce)
            #expect(once.status == 200)
            let replay = try await Self.signedLogin(
                client, appKey: app.appKey, secret: secret, userId: "u1", nonce: nonce)
            #expect(replay.status == 401)
            #expect(replay.code == 1038)
            #expect(replay.message == "X-Nonce was already used")

            let missing = try await Self.signedLogin(client, appKey: app.appKey, secret: secret, userId: "u1") {
                $0["X-Signature"] = nil
            }
            #expect(missing.code == 1038)
            let unknownApp = try await Self.signedLogin(client, appKey: "ak_unknown", secret: secret, userId: "u1")
            #expect(unknownApp.code == 1039)
            let mismatch = try await Self.signedLogin(
                client, appKey: app.appKey, secret: secret, userId: "u1",
                bodyAppKey: "ak_other")
            #expect(mismatch.code == 1041)
            let badUser = try await Self.signedLogin(client, appKey: app.appKey, secret: secret, userId: "no spaces")
            #expect(badUser.code == 1002)
        }
    }

    @Test func secretRotationKeepsThePreviousSecretForTheGracePeriod() async throws {
        try await withLiveApp { live in
            let (app, oldSecret) = try await live.createApp()
            let repository = live.auth.appRepository
            let (rotated, newSecret) = try #require(
                try await repository.rotateSecret(
                    appKey: app.appKey,
                    graceSeconds: 60,
                    secrets: live.auth.secrets))
            live.auth.directory.upsert(rotated)
            let client = live.client()
            #expect(
                try await Self.signedLogin(client, appKey: app.appKey, secret: newSecret, userId: "a").status == 200)
            #expect(
                try await Self.signedLogin(client, appKey: app.appKey, secret: oldSecret, userId: "a").status == 200)

            let (immediate, newest) = try #require(
                try await repository.rotateSecret(
                    appKey: app.appKey,
                    graceSeconds: 0,
                    secrets: live.auth.secrets))
            live.auth.directory.upsert(immediate)
            #expect(try await Self.signedLogin(client, appKey: app.appKey, secret: newSecret, userId: "a").code == 1038)
            #expect(try await Self.signedLogin(client, appKey: app.appKey, secret: newest, userId: "a").status == 200)
        }
    }

    /// The worked example in openapi.yaml, recomputed: if this changes, the documentation must change too.
    @Test func documentedWorkedExample() {
        let body = Array(#"{"appKey":"ak_live_4f3c2b1a","userId":"user-1001","platform":"ios"}"#.utf8)
        #expect(Hex.encode(SHA256.hash(body)) == RequestSignatureExample.bodySHA256)
        let signature = RequestSignature.sign(
            secret: RequestSignatureExample.secret, method: "POST",
            pathWithQuery: "/api/im/auth/login", timestamp: "1767225600",
            nonce: "n-7f9c2ad41e", body: body)
        #expect(signature == RequestSignatureExample.signature)
        #expect(
            Hex.encode(SHA256.hash([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }
}

/// Values quoted in openapi.yaml's signing example.
enum RequestSignatureExample {
    static let secret = "as_3q2-7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    static let bodySHA256 = "f396f87868710fd6e85019ca73c29a4f2e2c6de7a956b4f1da355cbac1c2cef5"
    static let signature = "f12dbc38fd203c6bc21023be63e44b23c7b1e9b53bd369265345900db8632299"
}
