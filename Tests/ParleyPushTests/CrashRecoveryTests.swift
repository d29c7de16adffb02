import Foundation
import ParleyLiveSupport
import ParleyPush
import ParleyTestSupport
import Testing

/// The outbox survives the process: a message committed by one server is pushed by the next, exactly once.
@Suite("Push after a crash", .serialized, .enabled(if: MockAPNs.python != nil, "\(MockAPNs.unavailable)"))
struct CrashRecoveryTests {
    @Test func aPushCommittedBeforeACrashIsDeliveredAfterTheRestart() async throws {
        let provider = MockAPNs.Provider(keyId: "KEY0000001", teamId: "TEAM000001", key: try .generate())
        let mock = try await MockAPNs(providers: [provider])
        defer { mock.stop() }
        try await withDatabase { url in
            // First server: its worker never runs (as if it died right after the commits).
            let first = try await LiveApp(databaseURL: url, environment: ["PARLEY_PUSH_POLL_MS": "0"])
            let (app, _) = try await first.createApp(name: "Crash")
            let messaging = MessagingFixture(live: first, appKey: app.appKey, appId: app.id)
            let fixture = PushFixture(messaging: messaging, mock: mock, provider: provider)
            try await fixture.configure(appId: app.id, provider: provider)
            let users = try await messaging.users(2)
            let waiting = PushFixture.token()
            let leased = PushFixture.token()
            try await fixture.bind(users[1], token: waiting)
            let other = try await messaging.users(1, prefix: "other")[0]
            try await fixture.bind(other, token: leased)
            try await messaging.sendOK(users[0], to: users[1].userId, content: "queued before the crash")
            try await messaging.sendOK(users[0], to: other.userId, content: "leased before the crash")
            #expect(try await fixture.jobCount() == 2)
            // The second job was taken by a worker that then died mid-delivery: leased, one attempt spent.
            _ = try await first.app.database.query(
                """
                UPDATE push_jobs SET leased_until = now() + interval '2 seconds', attempts = 1
                WHERE message_id = (SELECT max(id) FROM messages)
                """)
            let masterKey = first.masterKeyHex
            await first.stop()
            #expect(mock.requests().isEmpty)

            // Second server on the same database and master key, worker polling.
            let second = try await LiveApp(
                databaseURL: url, masterKeyHex: masterKey,
                environment: PushFixture.fastPolling)
            do {
                let restarted = PushFixture(
                    messaging: MessagingFixture(live: second, appKey: app.appKey, appId: app.id),
                    mock: mock, provider: provider)
                try await restarted.drained(timeout: .seconds(15))
                #expect(mock.requests(token: waiting).map(\.status) == [200])
                #expect(mock.requests(token: waiting).first?.alert["body"] as? String == "queued before the crash")
                #expect(mock.requests(token: leased).map(\.status) == [200], "taken over once its lease expired")
                // Nothing more arrives later.
                try await Task.sleep(for: .milliseconds(300))
                #expect(mock.requests().count == 2)
            } catch {
                await second.stop()
                throw error
            }
            await second.stop()
        }
    }
}
