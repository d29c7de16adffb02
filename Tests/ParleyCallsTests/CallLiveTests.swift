import Foundation
import ParleyAuth
import ParleyCrypto
import ParleyLiveSupport
import ParleyPostgres
import ParleyTestSupport
import Testing

/// Calls end to end on live servers: devices on the WebSocket, REST for the rest, the records in the conversations.
struct CallLiveTests {
    /// The call records between two users, oldest first (content parsed).
    static func records(_ fixture: MessagingFixture, _ a: Session, _ b: Session) async throws -> [[String: Any]] {
        let response = try await fixture.history(a, MessagingFixture.singleID(a, b))
        guard response.status == 200 else { return [] }
        return (response.data["messages"] as? [[String: Any]] ?? [])
            .filter { ($0["msgType"] as? String)?.hasPrefix("call") == true }
            .sorted { ($0["seq"] as? Int ?? 0) < ($1["seq"] as? Int ?? 0) }
            .compactMap { message in
                var content = MessagingFixture.contentObject(message) ?? [:]
                content["msgType"] = message["msgType"]
                content["fromId"] = message["fromId"]
                return content
            }
    }

    static func invite(
        _ fixture: MessagingFixture, _ caller: Session, _ callees: [Session], body: [String: Any] = [:]
    ) async throws -> [String: Any] {
        var json: [String: Any] = ["participantIds": callees.map(\.userId), "mediaType": "audio"]
        json.merge(body) { _, new in new }
        let response = try await fixture.client.post("/api/calls", json: json, token: caller.accessToken)
        guard response.status == 201 else { throw TestFailure("invite failed: \(response.status) \(response.text)") }
        return response.data
    }

    static func act(_ fixture: MessagingFixture, _ action: String, _ callId: String, as session: Session)
        async throws -> TestResponse
    {
        try await fixture.client.post("/api/calls/\(callId)/\(action)", token: session.accessToken)
    }

    static func data(_ frame: [String: Any]) -> [String: Any] { frame["data"] as? [String: Any] ?? [:] }

    @Test func aOneToOneCallRingsEveryDeviceOfTheCalleeAndLeavesOneRecord() async throws {
        try await MessagingFixture.run { fixture in
            let users = try await fixture.users(2)
            let (alice, bob) = (users[0], users[1])
            let bobAndroid = try Session(
                try await fixture.client.login(appKey: fixture.appKey, username: "user1", platform: "android"))
            let port = fixture.live.port
            let aliceSocket = try await IMTestClient.connect(port: port, token: alice.imToken)
            let bobPhone = try await IMTestClient.connect(port: port, token: bob.imToken)
            let bobTablet = try await IMTestClient.connect(port: port, token: bobAndroid.imToken)
            defer { [aliceSocket, bobPhone, bobTablet].forEach { $0.close() } }

            let ack = try await aliceSocket.request(
                "call_invite", ["participantIds": [bob.userId], "mediaType": "audio", "userData": "room-42"])
            let callId = try #require(ack["callId"] as? String)
            #expect(ack["state"] as? String == "ringing")
            for device in [bobPhone, bobTablet] {
                let invited = Self.data(
                    try await device.next("call_invited") { Self.data($0)["callId"] as? String == callId })
                #expect(invited["callerId"] as? String == alice.userId)
                #expect(invited["mediaType"] as? String == "audio")
                #expect(invited["userData"] as? String == "room-42")
                #expect(invited["timeoutSeconds"] as? Int == 30)
                #expect(invited["participantIds"] as? [String] == [bob.userId])
            }
            // A device that reconnects learns of the ringing call from the list.
            let live = try await fixture.client.get("/api/calls", token: bob.accessToken)
            #expect((live.data["calls"] as? [[String: Any]])?.map { $0["callId"] as? String } == [callId])

            let accepted = try await bobPhone.request("call_accept", ["callId": callId])
            #expect(accepted["state"] as? String == "active")
            let toCaller = Self.data(try await aliceSocket.next("call_accepted"))
            #expect(toCaller["userId"] as? String == bob.userId)
            let elsewhere = Self.data(try await bobTablet.next("call_answered_elsewhere"))
            #expect(elsewhere["callId"] as? String == callId)
            await Self.expectFrameError(1703) { try await bobTablet.request("call_accept", ["callId": callId]) }

            let hungUp = try await aliceSocket.request("call_hangup", ["callId": callId])
            #expect(hungUp["state"] as? String == "ended")
            for device in [bobPhone, bobTablet] {
                let ended = Self.data(try await device.next("call_ended"))
                #expect(ended["reason"] as? String == "hangup")
                #expect(ended["userId"] as? String == alice.userId)
                #expect(ended["mediaType"] as? String == "audio")
                #expect(ended["durationSeconds"] is Int)
            }
            // The record reaches both sides as a message, once, and never rings (push disabled).
            let recordFrame = Self.data(
                try await bobPhone.next("message") { Self.data($0)["msgType"] as? String == "callAudio" })
            #expect(recordFrame["fromId"] as? String == alice.userId)
            let records = try await Self.records(fixture, alice, bob)
            #expect(records.count == 1)
            #expect(records.first?["callId"] as? String == callId)
            #expect(records.first?["status"] as? String == "completed")
            #expect(records.first?["durationSec"] is Int)
            #expect(records.first?["mediaType"] as? String == "audio")
            let options = try await fixture.database.query(
                "SELECT push_options::text AS o FROM messages WHERE msg_type = 'callAudio'")
            #expect(try options.map { try $0.decode("o", as: String?.self) } == [#"{"disabled": true}"#])
            let woken = try await fixture.client.get("/api/calls/\(callId)", token: bobAndroid.accessToken)
            #expect(woken.status == 200)
            #expect(woken.data["state"] as? String == "ended")
            #expect(woken.data["endReason"] as? String == "hangup")
            let participants = woken.data["participants"] as? [[String: Any]] ?? []
            #expect(participants.map { $0["userId"] as? String } == [alice.userId, bob.userId])
            #expect(participants.allSatisfy { $0["acceptedSessionId"] == nil })
        }
    }

    static func expectFrameError(_ code: Int, _ body: () async throws -> [String: Any]) async {
        do {
            _ = try await body()
            Issue.record("expected error \(code)")
        } catch let error as IMTestError {
            #expect(error.code == code, "\(error)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func rejectCancelAndBusyEachEndTheCallAndLeaveTheirRecord() async throws {
        try await MessagingFixture.run { fixture in
            let users = try await fixture.users(3)
            let (alice, bob, carol) = (users[0], users[1], users[2])
            let aliceSocket = try await IMTestClient.connect(port: fixture.live.port, token: alice.imToken)
            let bobSocket = try await IMTestClient.connect(port: fixture.live.port, token: bob.imToken)
            // The device that asks has its answer; events go to the user's other devices.
            let carolTablet = try Session(
                try await fixture.client.login(appKey: fixture.appKey, username: "user2", platform: "android"))
            let carolSocket = try await IMTestClient.connect(port: fixture.live.port, token: carolTablet.imToken)
            defer { [aliceSocket, bobSocket, carolSocket].forEach { $0.close() } }

            // Reject.
            let rejectedId = try #require(try await Self.invite(fixture, alice, [bob])["callId"] as? String)
            #expect(try await Self.act(fixture, "reject", rejectedId, as: bob).status == 200)
            let rejected = Self.data(try await aliceSocket.next("call_rejected"))
            #expect(rejected["reason"] as? String == "rejected")
            #expect(Self.data(try await aliceSocket.next("call_ended"))["reason"] as? String == "rejected")
            let again = try await Self.act(fixture, "reject", rejectedId, as: bob)
            #expect(again.status == 409)
            #expect(again.code == 1701)

            // Cancel: only the caller, before an answer.
            let cancelledId = try #require(
                try await Self.invite(fixture, alice, [bob], body: ["mediaType": "video"])["callId"] as? String)
            let notCaller = try await Self.act(fixture, "cancel", cancelledId, as: bob)
            #expect(notCaller.status == 403)
            #expect(notCaller.code == 1704)
            #expect(try await Self.act(fixture, "cancel", cancelledId, as: alice).status == 200)
            #expect(Self.data(try await bobSocket.next("call_cancelled"))["callId"] as? String == cancelledId)
            #expect(
                Self.data(try await bobSocket.next("call_ended") { Self.data($0)["callId"] as? String == cancelledId })[
                    "reason"] as? String == "cancelled")

            // Busy: bob is in a call with alice; carol's call answers busy for him.
            let activeId = try #require(try await Self.invite(fixture, alice, [bob])["callId"] as? String)
            #expect(try await Self.act(fixture, "accept", activeId, as: bob).status == 200)
            let busy = try await Self.invite(fixture, carol, [bob])
            #expect(busy["state"] as? String == "ended")
            #expect(busy["endReason"] as? String == "busy")
            #expect((busy["participants"] as? [[String: Any]])?.last?["state"] as? String == "busy")
            let busyEvent = Self.data(try await carolSocket.next("call_rejected"))
            #expect(busyEvent["reason"] as? String == "busy")
            #expect(busyEvent["userId"] as? String == bob.userId)
            #expect(try await Self.act(fixture, "hangup", activeId, as: bob).status == 200)

            let withAlice = try await Self.records(fixture, alice, bob)
            #expect(withAlice.map { $0["status"] as? String } == ["rejected", "cancelled", "completed"])
            #expect(withAlice.map { $0["msgType"] as? String } == ["callAudio", "callVideo", "callAudio"])
            let withCarol = try await Self.records(fixture, carol, bob)
            #expect(withCarol.map { $0["status"] as? String } == ["busy"])
            #expect(withCarol.first?["fromId"] as? String == carol.userId)

            // Ended calls are pruned after the retention; their records stay in the conversations.
            #expect(try await fixture.live.app.calls.service.prune(endedBeforeHours: 0) == 4)
            let pruned = try await fixture.client.get("/api/calls/\(rejectedId)", token: alice.accessToken)
            #expect(pruned.status == 404 && pruned.code == 1700)
            #expect(try await Self.records(fixture, alice, bob).count == 3)
        }
    }

    @Test func aThreePartyVideoCallGoesOnWhenOneCalleeTimesOut() async throws {
        try await MessagingFixture.run(environment: ["PARLEY_CALL_SWEEP_MS": "100"]) { fixture in
            let users = try await fixture.users(3)
            let (alice, bob, carol) = (users[0], users[1], users[2])
            let aliceSocket = try await IMTestClient.connect(port: fixture.live.port, token: alice.imToken)
            let carolSocket = try await IMTestClient.connect(port: fixture.live.port, token: carol.imToken)
            defer { [aliceSocket, carolSocket].forEach { $0.close() } }
            let call = try await Self.invite(
                fixture, alice, [bob, carol], body: ["mediaType": "video", "timeoutSeconds": 2])
            let callId = try #require(call["callId"] as? String)
            #expect(try await Self.act(fixture, "accept", callId, as: bob).status == 200)
            let timeout = Self.data(try await aliceSocket.next("call_timeout"))
            #expect(timeout["userIds"] as? [String] == [carol.userId])
            #expect(Self.data(try await carolSocket.next("call_timeout"))["callId"] as? String == callId)
            let state = try await fixture.client.get("/api/calls/\(callId)", token: alice.accessToken)
            #expect(state.data["state"] as? String == "active")
            let late = try await Self.act(fixture, "accept", callId, as: carol)
            #expect(late.status == 409)
            #expect(late.code == 1702)
            #expect(try await Self.act(fixture, "hangup", callId, as: bob).status == 200)
            #expect(Self.data(try await aliceSocket.next("call_ended"))["userId"] as? String == bob.userId)
            #expect(try await Self.records(fixture, alice, bob).map { $0["status"] as? String } == ["completed"])
            let missed = try await Self.records(fixture, alice, carol)
            #expect(missed.map { $0["status"] as? String } == ["missed"])
            #expect(missed.first?["msgType"] as? String == "callVideo")
        }
    }

    @Test func twoDevicesAcceptingAtOnceHaveOneWinner() async throws {
        try await MessagingFixture.run { fixture in
            let users = try await fixture.users(2)
            let (alice, bob) = (users[0], users[1])
            let bobAndroid = try Session(
                try await fixture.client.login(appKey: fixture.appKey, username: "user1", platform: "android"))
            for _ in 0..<5 {
                let callId = try #require(try await Self.invite(fixture, alice, [bob])["callId"] as? String)
                async let first = Self.act(fixture, "accept", callId, as: bob)
                async let second = Self.act(fixture, "accept", callId, as: bobAndroid)
                let answers = try await [first, second]
                #expect(answers.map(\.status).sorted() == [200, 409])
                #expect(answers.compactMap(\.code).sorted() == [0, 1703])
                let session = try await fixture.database.query(
                    "SELECT accepted_session_id FROM call_participants WHERE call_id = \(callId) AND user_id = \(bob.userId)"
                )
                let winner = answers[0].status == 200 ? bob.sessionId : bobAndroid.sessionId
                #expect(try session[0].decode("accepted_session_id", as: String.self) == winner)
                #expect(try await Self.act(fixture, "hangup", callId, as: alice).status == 200)
            }
        }
    }

    /// Caller on one instance, callee on the other; the first stops while the call rings, and the timeout fires on
    /// the second, once: one `call_timeout`, one record.
    @Test func aTimeoutFiresOnceOnAnotherInstanceAfterTheFirstStops() async throws {
        try await withDatabase { url in
            let master = MasterKey.generateHex()
            let first = try await LiveApp(databaseURL: url, masterKeyHex: master)
            let second = try await LiveApp(
                databaseURL: url, masterKeyHex: master, environment: ["PARLEY_CALL_SWEEP_MS": "100"])
            do {
                let (app, secret) = try await first.createApp()
                let fixture = MessagingFixture(live: first, appKey: app.appKey, appId: app.id, secret: secret)
                let users = try await fixture.users(2)
                let (alice, bob) = (users[0], users[1])
                let bobSocket = try await IMTestClient.connect(port: second.port, token: bob.imToken)
                defer { bobSocket.close() }
                let callId = try #require(
                    try await Self.invite(fixture, alice, [bob], body: ["timeoutSeconds": 2])["callId"] as? String)
                #expect(Self.data(try await bobSocket.next("call_invited"))["callId"] as? String == callId)
                await first.stop()
                #expect(Self.data(try await bobSocket.next("call_timeout"))["callId"] as? String == callId)
                #expect(Self.data(try await bobSocket.next("call_ended"))["reason"] as? String == "timeout")
                #expect(try await bobSocket.collect("call_timeout", for: .seconds(1)).isEmpty)
                let rows = try await second.app.database.query(
                    "SELECT count(*) AS n FROM messages WHERE msg_type = 'callAudio'")
                #expect(try rows[0].decode("n", as: Int.self) == 1)
                let bobView = MessagingFixture(live: second, appKey: app.appKey, appId: app.id, secret: secret)
                #expect(try await Self.records(bobView, bob, alice).map { $0["status"] as? String } == ["missed"])
                await second.stop()
            } catch {
                await first.stop()
                await second.stop()
                throw error
            }
        }
    }

    @Test func badInputIsRefusedWithItsCode() async throws {
        try await MessagingFixture.run { fixture in
            let users = try await fixture.users(10)
            let (alice, bob, carol) = (users[0], users[1], users[2])
            func invite(_ body: [String: Any], as session: Session = alice) async throws -> TestResponse {
                var json: [String: Any] = ["participantIds": [bob.userId], "mediaType": "audio"]
                json.merge(body) { _, new in new }
                return try await fixture.client.post("/api/calls", json: json, token: session.accessToken)
            }
            func expect(_ response: TestResponse, _ status: Int, _ code: Int) {
                #expect(response.status == status, "\(response.text)")
                #expect(response.code == code, "\(response.text)")
            }
            // Accepted, then cancelled: a caller is in one call at a time.
            func inviteAccepted(_ body: [String: Any]) async throws {
                let response = try await invite(body)
                #expect(response.status == 201, "\(response.text)")
                let callId = try #require(response.data["callId"] as? String)
                #expect(try await Self.act(fixture, "cancel", callId, as: alice).status == 200)
            }
            expect(try await invite(["userData": String(repeating: "x", count: 4097)]), 413, 1706)
            try await inviteAccepted(["userData": String(repeating: "x", count: 4096)])
            expect(try await invite(["participantIds": users.dropFirst().map(\.userId)]), 400, 1705)
            try await inviteAccepted(["participantIds": users.dropFirst().dropFirst().map(\.userId)])
            expect(try await invite(["timeoutSeconds": 121]), 400, 1002)
            expect(try await invite(["timeoutSeconds": 0]), 400, 1002)
            expect(try await invite(["mediaType": "fax"]), 400, 1002)
            expect(try await invite(["participantIds": [alice.userId]]), 400, 1002)
            expect(try await invite(["participantIds": []]), 400, 1002)
            expect(try await invite(["participantIds": ["nobody"]]), 404, 1103)
            expect(try await invite(["userData": 7]), 400, 1002)

            let callId = try #require(try await invite(["participantIds": [bob.userId]]).data["callId"] as? String)
            expect(try await fixture.client.get("/api/calls/call_unknown", token: alice.accessToken), 404, 1700)
            expect(try await fixture.client.get("/api/calls/nope", token: alice.accessToken), 404, 1700)
            // Not a participant: the same answer as an unknown call.
            expect(try await fixture.client.get("/api/calls/\(callId)", token: carol.accessToken), 404, 1700)
            expect(try await Self.act(fixture, "accept", callId, as: carol), 404, 1700)
            expect(try await Self.act(fixture, "accept", callId, as: alice), 409, 1703)
            expect(try await fixture.client.get("/api/calls/turn", token: alice.accessToken), 404, 1707)
            expect(try await fixture.client.get("/api/calls/\(callId)"), 401, 1030)

            let socket = try await IMTestClient.connect(port: fixture.live.port, token: carol.imToken)
            defer { socket.close() }
            await Self.expectFrameError(1002) { try await socket.request("call_accept", [:]) }
            await Self.expectFrameError(1700) { try await socket.request("call_hangup", ["callId": callId]) }
            await Self.expectFrameError(1002) { try await socket.request("call_invite", ["mediaType": "audio"]) }
            await Self.expectFrameError(1706) {
                try await socket.request(
                    "call_invite",
                    [
                        "participantIds": [bob.userId], "mediaType": "audio",
                        "userData": String(repeating: "y", count: 5000),
                    ])
            }
        }
    }

    @Test func turnCredentialsAreIssuedInCoturnsFormatWhenConfigured() async throws {
        let environment = [
            "PARLEY_TURN_SECRET": "north-wind", "PARLEY_TURN_URIS": "turn:turn.example:3478, turns:turn.example:5349",
            "PARLEY_TURN_TTL_SECONDS": "600",
        ]
        try await MessagingFixture.run(environment: environment) { fixture in
            let alice = try await fixture.users(1)[0]
            let before = Int(Date().timeIntervalSince1970)
            let response = try await fixture.client.get("/api/calls/turn", token: alice.accessToken)
            #expect(response.status == 200)
            let username = try #require(response.string("username"))
            let parts = username.split(separator: ":", maxSplits: 1)
            let expiry = try #require(Int(parts[0]))
            #expect(expiry >= before + 600 && expiry <= Int(Date().timeIntervalSince1970) + 600)
            #expect(parts[1] == Substring(alice.userId))
            let expected = Base64.encode(HMAC.sha1(key: Array("north-wind".utf8), message: Array(username.utf8)))
            #expect(response.string("credential") == expected)
            #expect(response.string("password") == expected)
            #expect(response.data["ttl"] as? Int == 600)
            #expect(response.data["uris"] as? [String] == ["turn:turn.example:3478", "turns:turn.example:5349"])
        }
    }
}
