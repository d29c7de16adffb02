import Foundation
import ParleyLiveSupport
import ParleyTestSupport
import Synchronization
import Testing

@testable import ParleyAuth

/// Session policies, account conflict and revocation across instances.
@Suite("Account conflict and revocation")
struct AccountConflictTests {
    /// Collects `SessionEvents` in the background.
    final class EventRecorder: Sendable {
        final class Storage: Sendable {
            let events = Mutex<[EndedSession]>([])
        }

        let storage = Storage()
        let task: Task<Void, Never>

        init(_ bus: SessionEvents) {
            let stream = bus.subscribe()
            let storage = self.storage
            task = Task {
                for await case .sessionEnded(let ended) in stream { storage.events.withLock { $0.append(ended) } }
            }
        }

        var all: [EndedSession] { storage.events.withLock { $0 } }
        deinit { task.cancel() }
    }

    @Test func secondLoginOnTheSamePlatformEndsTheFirst() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            let recorder = EventRecorder(live.auth.events)
            let phone = try Session(try await client.register(appKey: app.appKey, username: "alice", platform: "ios"))
            let tablet = try Session(try await client.login(appKey: app.appKey, username: "alice", platform: "android"))
            let newPhone = try Session(
                try await client.login(
                    appKey: app.appKey, username: "alice", platform: "ios",
                    deviceModel: "iPhone 16 Pro"))

            // The displaced session's tokens are refused at once on this instance...
            #expect(try await client.get("/api/users/me", token: phone.accessToken).code == 1034)
            #expect(throws: (any Error).self) { try live.auth.authenticator.verifyIMToken(phone.imToken) }
            // ...its refresh token too; the other platform's session and the new one live on.
            #expect(try await client.refresh(phone.refreshToken).code == 1034)
            #expect(try await client.get("/api/users/me", token: tablet.accessToken).status == 200)
            #expect(try await client.get("/api/users/me", token: newPhone.accessToken).status == 200)

            // The realtime gateway hears about it, with the new device's model for the notice.
            let heard = try await eventually { recorder.all.contains { $0.sessionId == phone.sessionId } }
            #expect(heard != nil)
            let event = try #require(recorder.all.first { $0.sessionId == phone.sessionId })
            #expect(event.reason == .accountConflict)
            #expect(event.deviceModel == "iPhone 16 Pro")
            #expect(event.userId == phone.userId)
            #expect(event.appId == app.id)
            #expect(event.conflictNotice?.text.contains("iPhone 16 Pro") == true)
            // Announced once, although the NOTIFY comes back to this instance too.
            try await Task.sleep(for: .milliseconds(300))
            #expect(recorder.all.filter { $0.sessionId == phone.sessionId }.count == 1)
        }
    }

    @Test func differentPlatformsKeepBothSessions() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            let web = try Session(try await client.register(appKey: app.appKey, username: "bob", platform: "web"))
            let desktop = try Session(try await client.login(appKey: app.appKey, username: "bob", platform: "desktop"))
            #expect(try await client.get("/api/users/me", token: web.accessToken).status == 200)
            #expect(try await client.get("/api/users/me", token: desktop.accessToken).status == 200)
        }
    }

    @Test func singleAndUnlimitedPolicies() async throws {
        try await withLiveApp { live in
            let client = live.client()
            let (single, _) = try await live.createApp(name: "single", policy: .single)
            let a = try Session(try await client.register(appKey: single.appKey, username: "carol", platform: "web"))
            _ = try Session(try await client.login(appKey: single.appKey, username: "carol", platform: "ios"))
            #expect(try await client.get("/api/users/me", token: a.accessToken).code == 1034)

            let (unlimited, _) = try await live.createApp(name: "unlimited", policy: .unlimited)
            let b = try Session(try await client.register(appKey: unlimited.appKey, username: "carol", platform: "ios"))
            _ = try Session(try await client.login(appKey: unlimited.appKey, username: "carol", platform: "ios"))
            #expect(try await client.get("/api/users/me", token: b.accessToken).status == 200)
        }
    }

    @Test func sameDeviceReloginIsNotAConflict() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            let recorder = EventRecorder(live.auth.events)
            _ = try await client.register(appKey: app.appKey, username: "dora", platform: "ios")
            let first = try Session(
                try await client.login(
                    appKey: app.appKey, username: "dora", platform: "ios",
                    deviceId: "device-1"))
            _ = try Session(
                try await client.login(
                    appKey: app.appKey, username: "dora", platform: "ios",
                    deviceId: "device-1"))
            _ = try await eventually { recorder.all.contains { $0.sessionId == first.sessionId } }
            #expect(recorder.all.first { $0.sessionId == first.sessionId }?.reason == .relogin)
        }
    }

    /// Two instances on one database: a session ended on one has its tokens refused by the other (through NOTIFY,
    /// with the poll as the backstop), and the other instance publishes the event too.
    @Test func endedSessionIsRefusedEverywhere() async throws {
        try await withDatabase { url in
            let master = MasterKey.generateHex()
            let first = try await LiveApp(databaseURL: url, masterKeyHex: master)
            let second = try await LiveApp(databaseURL: url, masterKeyHex: master)
            do {
                let (app, _) = try await first.createApp()
                let recorder = EventRecorder(second.auth.events)
                let old = try Session(
                    try await first.client().register(
                        appKey: app.appKey, username: "eve",
                        platform: "ios"))
                // The app reached the second instance (NOTIFY, or the poll).
                #expect(try await eventually { second.auth.directory.app(id: app.id) != nil } != nil)
                #expect(try await second.client().get("/api/users/me", token: old.accessToken).status == 200)

                _ = try Session(
                    try await first.client().login(
                        appKey: app.appKey, username: "eve", platform: "ios",
                        deviceModel: "Galaxy S24"))
                #expect(
                    try await eventually {
                        try await second.client().get("/api/users/me", token: old.accessToken).code == 1034
                    } != nil)
                #expect(try await eventually { recorder.all.contains { $0.sessionId == old.sessionId } } != nil)
                let event = recorder.all.first { $0.sessionId == old.sessionId }
                #expect(event?.reason == .accountConflict)
                #expect(event?.deviceModel == "Galaxy S24")
            } catch {
                await first.stop()
                await second.stop()
                throw error
            }
            await first.stop()
            await second.stop()
        }
    }

    /// A notification missed (here: the session is ended behind the server's back, without NOTIFY) is caught by
    /// the poll within about a second.
    @Test func pollCatchesEndsWithoutNotification() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            let session = try Session(try await client.register(appKey: app.appKey, username: "fred"))
            _ = try await live.app.database.query(
                """
                UPDATE sessions SET ended_at = now(), end_reason = 'revoked' WHERE id = \(session.sessionId)
                """)
            // No NOTIFY was sent: one poll (the periodic service runs it every `pollInterval`) finds the end.
            await live.auth.sync.poll()
            #expect(try await client.get("/api/users/me", token: session.accessToken).code == 1034)
        }
    }

    /// The same for an app changed without NOTIFY.
    @Test func pollCatchesAppChangesWithoutNotification() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp()
            #expect(try await eventually { live.auth.directory.app(id: app.id) != nil } != nil)
            await live.auth.sync.poll()
            #expect(live.auth.directory.app(id: app.id)?.name == app.name)
            _ = try await live.app.database.query(
                "UPDATE apps SET name = 'renamed behind its back', updated_at = now() WHERE id = \(app.id)")
            await live.auth.sync.poll()
            #expect(live.auth.directory.app(id: app.id)?.name == "renamed behind its back")
        }
    }
}
