import Foundation
import ParleyApp
import ParleyAuth
import ParleyCrypto
import ParleyHTTPClient
import ParleyLiveSupport
import ParleyObservability
import ParleyPostgres
import ParleyPush
import ParleyTestSupport
import Testing

/// APNs certificate-based authentication (issue 21): .p12 files read with OpenSSL, stored sealed, and presented as
/// TLS client certificates to the mock APNs in TLS mode; every attempt recorded for the admin API.
@Suite(
    "APNs certificates", .serialized, .enabled(if: TestPKI.openssl != nil, "\(TestPKI.unavailable)"))
struct APNsCertificateTests {
    static let bundleId = "com.example.chat"

    @Test func p12FilesOpenWithTheirPasswordOnly() async throws {
        let pki = try await TestPKI(clientName: Self.bundleId)
        defer { pki.remove() }
        let locked = try Array(Data(contentsOf: URL(fileURLWithPath: try await pki.clientP12(password: "s3cret"))))
        let identity = try TLSClientIdentity.pkcs12(locked, password: "s3cret")
        #expect(identity.commonName == Self.bundleId)
        #expect(
            identity.certificatePEM.components(separatedBy: "-----BEGIN CERTIFICATE-----").count == 3,
            "the certificate, then the CA that came with it")
        #expect(identity.privateKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let expiry = try #require(identity.notAfter)
        #expect(expiry > Int(Date().timeIntervalSince1970) && expiry < Int(Date().timeIntervalSince1970) + 3 * 86400)
        // Sealed as one text, read back whole.
        let reopened = try TLSClientIdentity(pem: identity.pem)
        #expect(reopened.certificatePEM == identity.certificatePEM && reopened.privateKeyPEM == identity.privateKeyPEM)

        #expect(throws: CryptoError.self) { try TLSClientIdentity.pkcs12(locked, password: "wrong") }
        #expect(throws: CryptoError.self) { try TLSClientIdentity.pkcs12(locked, password: nil) }
        #expect(throws: CryptoError.self) { try TLSClientIdentity.pkcs12(Array("not a p12".utf8), password: nil) }
        #expect(throws: CryptoError.self) { try TLSClientIdentity(pem: identity.certificatePEM) }

        let open = try Array(Data(contentsOf: URL(fileURLWithPath: try await pki.clientP12(password: ""))))
        #expect(try TLSClientIdentity.pkcs12(open, password: nil).commonName == Self.bundleId)
        // RC2-encrypted, as Keychain Access exports them: needs OpenSSL's legacy provider.
        let legacy = try Array(
            Data(contentsOf: URL(fileURLWithPath: try await pki.clientP12(password: "old", legacy: true))))
        #expect(try TLSClientIdentity.pkcs12(legacy, password: "old").privateKeyPEM == identity.privateKeyPEM)
    }

    @Test func theP8KeyWinsAndCertificatesServeTheirOwnEnvironment() throws {
        let identity = TLSClientIdentity(certificatePEM: "c", privateKeyPEM: "k", commonName: nil, notAfter: nil)
        var credentials = APNsCredentials(
            appId: 1, teamId: "", keyId: "", tokenKey: nil, certificates: [.sandbox: identity], bundleId: "b",
            endpoint: nil)
        guard case .certificate(let used)? = credentials.authentication(for: .sandbox) else {
            Issue.record("the sandbox certificate is used without a .p8 key")
            return
        }
        #expect(used == identity)
        #expect(credentials.authentication(for: .production) == nil)
        credentials.tokenKey = try P256.SigningKey.generate()
        for environment in PushEnvironment.allCases {
            guard case .token? = credentials.authentication(for: environment) else {
                Issue.record("the .p8 key serves \(environment)")
                continue
            }
        }
    }

    @Test(.enabled(if: MockAPNs.python != nil, "\(MockAPNs.unavailable)"))
    func certificateRequestsCarryNoProviderTokenAndNeverShareAConnection() async throws {
        let pki = try await TestPKI(clientName: Self.bundleId)
        defer { pki.remove() }
        let mock = try await MockAPNs(providers: [], pki: pki)
        defer { mock.stop() }
        let p12 = try Array(Data(contentsOf: URL(fileURLWithPath: try await pki.clientP12(password: "pw"))))
        let identity = try TLSClientIdentity.pkcs12(p12, password: "pw")
        let client = HTTPClient(tls: HTTPClientTLS(caFile: pki.caFile))
        defer { client.shutdown() }
        let sender = APNsSender(client: client, logger: Logger(sink: LogSink(capturingAt: .info)))
        let credentials = APNsCredentials(
            appId: 1, teamId: "", keyId: "", tokenKey: nil, certificates: [.sandbox: identity],
            bundleId: Self.bundleId, endpoint: mock.endpoint)
        func notification(_ token: String, _ environment: PushEnvironment) -> PushNotification {
            PushNotification(
                vendor: .apns, token: token, environment: environment, bundleId: "", kind: .alert,
                payload: Array(#"{"aps":{"alert":"hi"}}"#.utf8), collapseId: "1", expiration: 0)
        }
        let token = PushFixture.token()
        let answer = await sender.attempt(notification(token, .sandbox), credentials: credentials)
        #expect(answer.outcome == PushOutcome.delivered && answer.status == 200)
        #expect(answer.vendorId?.count == 36, "APNs' apns-id")
        let recorded = try #require(mock.requests(token: token).first)
        #expect(recorded.certificate == Self.bundleId, "the mock saw the client certificate")
        #expect(recorded.headers["authorization"] == nil)

        let production = await sender.attempt(notification(PushFixture.token(), .production), credentials: credentials)
        #expect(production.outcome == PushOutcome.rejected(reason: "no APNs credentials for production"))
        #expect(production.status == nil)

        // The same client without the certificate: libcurl must not reuse the authenticated connection.
        await #expect(throws: HTTPClientError.self) {
            _ = try await client.execute(
                HTTPClientRequest(
                    method: "POST", url: "\(mock.endpoint)/3/device/\(PushFixture.token())",
                    headers: [("apns-topic", Self.bundleId), ("apns-push-type", "alert")],
                    body: .bytes(Array(#"{"aps":{}}"#.utf8)), timeout: .seconds(20), httpVersion: .http2TLS))
        }
        #expect(mock.requests().count == 1)
    }

    @Test(.enabled(if: MockAPNs.python != nil, "\(MockAPNs.unavailable)"))
    func aConfiguredCertificatePushesOverTLSAndTheAttemptsAreShown() async throws {
        let pki = try await TestPKI(clientName: Self.bundleId)
        defer { pki.remove() }
        let mock = try await MockAPNs(providers: [], pki: pki)
        defer { mock.stop() }
        let p12 = try await pki.clientP12(password: "s3cr3t-Pa55")
        try await withDatabase { url in
            let environment = ["PARLEY_PUSH_POLL_MS": "50", "PARLEY_PUSH_CA_FILE": pki.caFile]
            let live = try await LiveApp(databaseURL: url, environment: environment)
            do {
                let configuration = try LiveApp.configuration(
                    databaseURL: url, masterKeyHex: live.masterKeyHex, environment: environment)
                let (app, secret) = try await live.createApp(name: "Certificates")
                func command(_ arguments: [String]) async throws -> [String] {
                    try await CommandOutput.lines {
                        try await AppCommand.run(
                            ["push", app.appKey] + arguments, configuration: configuration,
                            environment: ["P12_PASSWORD": "s3cr3t-Pa55", "WRONG": "nope"], output: $0)
                    }
                }
                // A wrong or missing password stores nothing and never shows the password.
                for bad in [["--apns-p12-password-env", "WRONG"], ["--apns-p12-password-env", "UNSET"], []] {
                    do {
                        _ = try await command(["--apns-p12-sandbox", p12] + bad)
                        Issue.record("\(bad) was accepted")
                    } catch let error as AppCommand.UsageError {
                        #expect(!error.description.contains("nope") && !error.description.contains("s3cr3t-Pa55"))
                    }
                }
                #expect(CommandOutput.field("apnsP12Sandbox", in: try await command([])) == "(none)")
                let set = try await command([
                    "--apns-p12-sandbox", p12, "--apns-p12-password-env", "P12_PASSWORD", "--bundle-id", Self.bundleId,
                    "--endpoint", mock.endpoint, "--enable",
                ])
                #expect(CommandOutput.field("enabled", in: set) == "true")
                #expect(CommandOutput.field("apnsP12Sandbox", in: set) == "(stored, encrypted)")
                #expect(CommandOutput.field("apnsP12Production", in: set) == "(none)")
                #expect(set.contains { $0.hasPrefix("stored sandbox certificate: \(Self.bundleId), expires ") })
                #expect(!set.joined().contains("s3cr3t-Pa55") && !set.joined().contains("PRIVATE KEY"))

                let messaging = MessagingFixture(live: live, appKey: app.appKey, appId: app.id, secret: secret)
                let users = try await messaging.users(2)
                let (alice, bob) = (users[0], users[1])
                let sandboxToken = PushFixture.token()
                let productionToken = PushFixture.token()
                // A session holds one token per vendor: bob's second device is a second session.
                let bobsOtherDevice = try Session(
                    try await messaging.client.login(appKey: app.appKey, username: "user1", platform: "android"))
                for (session, token, tokenEnvironment) in [
                    (bob, sandboxToken, "sandbox"), (bobsOtherDevice, productionToken, "production"),
                ] {
                    let bound = try await messaging.client.post(
                        "/api/push/tokens",
                        json: [
                            "token": token, "vendor": "apns", "deviceId": "d-\(tokenEnvironment)",
                            "environment": tokenEnvironment,
                        ], token: session.accessToken)
                    #expect(bound.status == 201, "\(bound.text)")
                }
                let sent = try await messaging.client.post(
                    "/api/im/messages",
                    json: [
                        "toId": bob.userId, "chatType": "single", "msgType": "text", "content": "ring ring",
                        "push": ["title": "Alice", "body": "You have a new call", "sound": "phone_ringing.mp3"],
                    ], token: alice.accessToken)
                #expect(sent.status == 201, "\(sent.text)")
                let messageId = try #require(sent.data["id"] as? String)
                let fixture = PushFixture(messaging: messaging, mock: mock, provider: Self.unusedProvider)
                try await fixture.drained()

                let push = try #require(mock.requests(token: sandboxToken).first, "\(live.sink.capturedText)")
                #expect(push.status == 200, "\(push.reason ?? "")")
                #expect(push.certificate == Self.bundleId && push.headers["authorization"] == nil)
                #expect(push.alert["title"] as? String == "Alice")
                #expect(push.alert["body"] as? String == "You have a new call")
                #expect(push.aps["sound"] as? String == "phone_ringing.mp3")
                #expect(mock.requests(token: productionToken).isEmpty, "no production certificate, no .p8 key")

                let answer = try await live.adminCall(
                    "GET", "/api/admin/users/\(bob.userId)/push-attempts", appKey: app.appKey, secret: secret)
                #expect(answer.status == 200, "\(answer.text)")
                let attempts = try #require(answer.data["attempts"] as? [[String: Any]])
                #expect(attempts.count == 2)
                let delivered = try #require(attempts.first { $0["outcome"] as? String == "delivered" })
                #expect(delivered["messageId"] as? String == messageId)
                #expect(delivered["vendor"] as? String == "apns" && delivered["kind"] as? String == "alert")
                #expect(delivered["tokenSuffix"] as? String == String(sandboxToken.suffix(8)))
                #expect(delivered["status"] as? Int == 200)
                #expect((delivered["vendorId"] as? String)?.count == 36)
                let rejected = try #require(attempts.first { $0["outcome"] as? String == "rejected" })
                #expect(rejected["reason"] as? String == "no APNs credentials for production")
                #expect(rejected["status"] is NSNull)
                #expect(!answer.text.contains(sandboxToken) && !answer.text.contains(productionToken))

                let unknown = try await live.adminCall(
                    "GET", "/api/admin/users/nobody/push-attempts", appKey: app.appKey, secret: secret)
                #expect(unknown.status == 404 && unknown.code == 1050)
                let unsigned = try await messaging.client.get("/api/admin/users/\(bob.userId)/push-attempts")
                #expect(unsigned.status == 401)

                // Only the last 50 per user are kept, newest first; another user's are left alone.
                let repository = PushAttemptRepository(database: live.app.database)
                for batch in 0..<3 {
                    try await repository.record(
                        (0..<20).map { index in
                            PushAttempt(
                                appId: app.id, userId: alice.userId, messageId: Int64(batch * 20 + index),
                                vendor: .apns,
                                token: PushFixture.token(), kind: "alert", answer: PushAnswer(outcome: .delivered))
                        })
                }
                let kept = try await repository.attempts(appId: app.id, userId: alice.userId, limit: 100)
                #expect(kept.count == 50)
                #expect(kept.first?.messageId == 59 && kept.last?.messageId == 10)
                #expect(try await repository.attempts(appId: app.id, userId: bob.userId).count == 2)
                await live.stop()
            } catch {
                await live.stop()
                throw error
            }
        }
    }

    static let unusedProvider = MockAPNs.Provider(
        keyId: "KEY0000001", teamId: "TEAM000001", key: try! P256.SigningKey.generate())
}
