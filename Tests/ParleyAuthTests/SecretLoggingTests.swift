import Foundation
import ParleyLiveSupport
import Testing

@testable import ParleyAuth

/// No secret, password or token ever reaches the log, even at debug level.
@Suite("Secrets stay out of logs")
struct SecretLoggingTests {
    @Test func fullFlowLogsNoSecret() async throws {
        try await withLiveApp(logLevel: .debug) { live in
            let (app, secret) = try await live.createApp()
            let client = live.client()
            let password = "Tr0ub4dor&3-secret"
            var secrets = [secret, password, "wrong-password-123"]

            let registered = try Session(
                try await client.register(appKey: app.appKey, username: "alice", password: password))
            _ = try await client.login(appKey: app.appKey, username: "alice", password: "wrong-password-123")
            let login = try Session(
                try await client.login(
                    appKey: app.appKey, username: "alice", password: password,
                    platform: "android"))
            let refreshed = try Session(try await client.refresh(login.refreshToken))
            _ = try await client.refresh(login.refreshToken) // reuse: logged as a warning, without the token
            let im = try await client.post("/api/im/auth/token", token: registered.accessToken)
            // Tokens in a query string too (the WebSocket will take ?token=): the access log drops the query.
            _ = try await client.get("/api/users/me?token=\(registered.accessToken)", token: registered.accessToken)
            let signed = try await SignedRequestTests.signedLogin(
                client, appKey: app.appKey, secret: secret, userId: "ext-1")
            let badSigned = try await SignedRequestTests.signedLogin(
                client, appKey: app.appKey, secret: secret,
                userId: "ext-1"
            ) { $0["X-Signature"] = String(repeating: "ab", count: 32) }
            #expect(badSigned.code == 1038)
            _ = try await client.post("/api/auth/logout", token: registered.accessToken)

            for session in [registered, login, refreshed] {
                secrets += [session.accessToken, session.refreshToken, session.imToken]
            }
            secrets += [try #require(im.string("token")), try #require(signed.string("token"))]
            // Signatures and token signatures.
            secrets += secrets.compactMap {
                $0.split(separator: ".").count == 3 ? String($0.split(separator: ".")[2]) : nil
            }

            live.app.logger.sink.flush()
            let log = live.sink.capturedText
            #expect(log.contains("/api/auth/login")) // the flow was logged...
            for value in secrets {
                #expect(!log.contains(value), "the log contains a secret: \(value.prefix(6))…")
            }
            #expect(!log.contains("Bearer"))
            #expect(!log.contains(live.masterKeyHex))
        }
    }
}
