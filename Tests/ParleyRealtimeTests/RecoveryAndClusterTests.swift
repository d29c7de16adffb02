import Foundation
import ParleyAuth
import ParleyLiveSupport
import ParleyTestSupport
import ParleyWebSocket
import Synchronization
import Testing

/// Catching up after a reconnect, two instances on one database, and a client that stops reading.
@Suite("Realtime recovery and cluster", .serialized)
struct RecoveryAndClusterTests {
    @Test func reconnectingClientGetsEveryMissedMessageOnceThroughSync() async throws {
        try await MessagingFixture.run { fx in
            let sender = try Session(try await fx.client.register(appKey: fx.appKey, username: "sender"))
            let reader = try await GatewayTests.device(fx, username: "reader")
            // The client keeps the cursor of its last sync, then goes away.
            let cursor = try #require(try await reader.socket.request("sync")["cursor"] as? String)
            reader.socket.drop()
            var sent: [String] = []
            for n in 0..<500 {
                sent.append(
                    try await fx.sendOK(sender, to: reader.session.userId, content: "missed \(n)")["id"] as! String)
            }
            let back = try await IMTestClient.connect(port: fx.live.port, token: reader.session.imToken)
            var received: [String] = []
            var next = cursor
            let deadline = ContinuousClock.now + .seconds(30)
            while received.count < sent.count && ContinuousClock.now < deadline {
                let page = try await back.request("sync", ["cursor": next, "limit": 200])
                received += (page["changes"] as? [[String: Any]] ?? []).compactMap {
                    ($0["message"] as? [String: Any])?["id"] as? String
                }
                next = try #require(page["cursor"] as? String)
                if page["hasMore"] as? Bool != true && received.count < sent.count {
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            #expect(received == sent)
            // Nothing more, and new messages now arrive live.
            let rest = try await back.request("sync", ["cursor": next])
            #expect((rest["changes"] as? [[String: Any]])?.isEmpty == true)
            try await fx.sendOK(sender, to: reader.session.userId, content: "live")
            let live = try await back.next("message")
            #expect((live["data"] as? [String: Any])?["content"] as? String == "live")
        }
    }

    @Test func twoInstancesOnOneDatabaseDeliverToEachOther() async throws {
        try await MessagingFixture.run { fx in
            // A second server on the same database: its own loops, pools and listener.
            let other = try await LiveApp(
                databaseURL: fx.live.app.configuration.databaseURL,
                masterKeyHex: fx.live.masterKeyHex)
            do {
                let second = MessagingFixture(live: other, appKey: fx.appKey, appId: fx.appId)
                let alice = try await GatewayTests.device(fx, username: "alice")
                let bobSession = try Session(try await second.client.register(appKey: fx.appKey, username: "bob"))
                let bob = try await IMTestClient.connect(port: other.port, token: bobSession.imToken)
                let aliceWeb = try await IMTestClient.connect(
                    port: other.port,
                    token: try Session(
                        try await second.client.login(
                            appKey: fx.appKey, username: "alice",
                            platform: "web")
                    ).imToken)

                let sent = try await alice.socket.request(
                    "send",
                    [
                        "toId": bobSession.userId, "chatType": "single",
                        "msgType": "text", "content": "across",
                        "clientMsgId": "x1",
                    ])
                let atBob = try await bob.next("message")
                #expect((atBob["data"] as? [String: Any])?["id"] as? String == sent["id"] as? String)
                let atAliceWeb = try await aliceWeb.next("message")
                #expect((atAliceWeb["data"] as? [String: Any])?["content"] as? String == "across")

                // A read mark and a reply back, then a revoke.
                try await bob.request("read", ["conversationId": sent["conversationId"] as! String, "seq": 1])
                let read = try await alice.socket.next("read")
                #expect((read["data"] as? [String: Any])?["seq"] as? Int == 1)
                let reply = try await bob.request(
                    "send",
                    [
                        "toId": alice.session.userId, "chatType": "single",
                        "msgType": "text", "content": "back", "clientMsgId": "x2",
                    ])
                _ = try await alice.socket.next("message")
                try await bob.request("revoke", ["msgId": reply["id"] as! String])
                let revoke = try await alice.socket.next("revoke")
                #expect((revoke["data"] as? [String: Any])?["msgId"] as? String == reply["id"] as? String)

                // Groups across instances, membership changes included.
                let group = try await fx.createGroup(alice.session, members: [bobSession])
                _ = try await bob.next("message")
                try await alice.socket.request(
                    "send",
                    [
                        "toId": group.groupId, "chatType": "group", "msgType": "text",
                        "content": "group across", "clientMsgId": "x3",
                    ])
                let groupMessage = try await bob.next("message")
                #expect((groupMessage["data"] as? [String: Any])?["content"] as? String == "group across")
                await other.stop()
            } catch {
                let metricsB = try? await other.client().get("/metrics").text
                Issue.record(
                    "metrics B: \(metricsB?.split(separator: "\n").filter { $0.contains("realtime") && !$0.hasPrefix("#") } ?? [])"
                )
                await other.stop()
                let logs = (fx.live.sink.capturedText + other.sink.capturedText).split(separator: "\n")
                    .filter { $0.contains("\"warning\"") || $0.contains("\"error\"") }
                let metricsA = try? await fx.client.get("/metrics").text
                Issue.record(
                    "instance logs:\n\(logs.joined(separator: "\n"))\nmetrics A: \(metricsA?.split(separator: "\n").filter { $0.contains("realtime") || $0.contains("websocket") } ?? [])"
                )
                throw error
            }
        }
    }

    /// An app created on one instance is usable on the other at once: the WebSocket upgrade takes the same path as
    /// REST (the directory, then the database), so no window exists in which one accepts a token the other refuses.
    @Test func anAppCreatedOnOneInstanceOpensWebSocketsOnTheOtherAtOnce() async throws {
        try await withDatabase { url in
            let master = MasterKey.generateHex()
            let first = try await LiveApp(databaseURL: url, masterKeyHex: master)
            let second = try await LiveApp(databaseURL: url, masterKeyHex: master)
            do {
                let (app, _) = try await first.createApp()
                let session = try Session(try await first.client().register(appKey: app.appKey, username: "newcomer"))
                // As if NOTIFY and the poll had not brought the app to the second instance yet.
                second.auth.directory.remove(id: app.id)
                let socket = try await IMTestClient.connect(port: second.port, token: session.imToken)
                #expect(socket.hello["type"] as? String == "hello")
                second.auth.directory.remove(id: app.id)
                let byQuery = try await IMTestClient.connect(
                    port: second.port, token: session.imToken, tokenInQuery: true)
                #expect(byQuery.hello["type"] as? String == "hello")
                second.auth.directory.remove(id: app.id)
                #expect(try await second.client().get("/api/users/me", token: session.accessToken).status == 200)
                socket.drop()
                byQuery.drop()
            } catch {
                await first.stop()
                await second.stop()
                throw error
            }
            await first.stop()
            await second.stop()
        }
    }

    @Test func aClientThatStopsReadingIsCutOffWhileOthersKeepTheirLatency() async throws {
        try await MessagingFixture.run(environment: [
            "PARLEY_WS_MAX_QUEUED_BYTES": "262144",
            "PARLEY_IM_MAX_TEXT_CHARS": "100000",
        ]) { fx in
            let sender = try Session(try await fx.client.register(appKey: fx.appKey, username: "sender"))
            let stalled = try await GatewayTests.device(fx, username: "stalled")
            let healthy = try await GatewayTests.device(fx, username: "healthy")
            let big = String(repeating: "x", count: 90_000)
            // ~18 MB for a client that never reads: more than the loopback socket buffers and the 256 KiB queue.
            var latencies: [Duration] = []
            let rounds = 200
            for round in 0..<rounds {
                try await fx.sendOK(sender, to: stalled.session.userId, content: big)
                if round % 20 == 0 {
                    let start = ContinuousClock.now
                    try await fx.sendOK(sender, to: healthy.session.userId, content: "ping \(round)")
                    _ = try await healthy.socket.next("message") { frame in
                        (frame["data"] as? [String: Any])?["content"] as? String == "ping \(round)"
                    }
                    latencies.append(ContinuousClock.now - start)
                }
            }
            // Functional bound, not a benchmark: each healthy round trip (a REST send plus delivery) stays short.
            #expect(latencies.allSatisfy { $0 < .seconds(2) }, "\(latencies)")
            // The stalled connection was closed as a slow consumer (4000): gone from the registry once its closing
            // handshake timed out (it never reads the Close), and counted by its code.
            let gone = try await eventually(timeout: .seconds(15)) {
                fx.live.app.realtime.connectionCount == 1
            }
            #expect(gone != nil)
            let metrics = try await fx.client.get("/metrics").text
            #expect(
                metrics.contains(#"parley_websocket_closes_total{code="4000"} 1"#),
                "\(metrics.split(separator: "\n").filter { $0.contains("closes") })")
            // Reading at last, it finds far fewer messages than were sent before the connection ends.
            let received = (try? await stalled.socket.collect("message", for: .seconds(3)).count) ?? 0
            #expect(received < rounds)
            // The healthy client still works.
            try await fx.sendOK(sender, to: healthy.session.userId, content: "still here")
            _ = try await healthy.socket.next("message") {
                ($0["data"] as? [String: Any])?["content"] as? String == "still here"
            }
        }
    }
}
