import Foundation
import ParleyAuth
import ParleyCrypto
import ParleyLiveSupport
import ParleyPostgres
import ParleyTestSupport
import Testing

/// What a call must respect beside its own rules: blocks and the friends-only policy, one call per user, deleted
/// accounts, and restarts of the instances.
struct CallHardeningTests {
    typealias Live = CallLiveTests

    static func expect(_ response: TestResponse, _ status: Int, _ code: Int) {
        #expect(response.status == status, "\(response.text)")
        #expect(response.code == code, "\(response.text)")
    }

    static func callCount(_ fixture: MessagingFixture) async throws -> Int {
        try await fixture.database.query("SELECT count(*) AS n FROM calls")[0].decode("n", as: Int.self)
    }

    static func participantState(_ fixture: MessagingFixture, _ callId: String, _ userId: String) async throws
        -> String?
    {
        try await fixture.database.query(
            "SELECT state FROM call_participants WHERE call_id = \(callId) AND user_id = \(userId)"
        ).first?.decode("state", as: String.self)
    }

    @Test func invitesFollowTheBlocksAndTheFriendsOnlyPolicyOfA1To1Send() async throws {
        try await MessagingFixture.run { fixture in
            let users = try await fixture.users(3)
            let (alice, bob, carol) = (users[0], users[1], users[2])
            // Events skip the device that asked: alice invites over REST from her phone and listens on her tablet.
            let aliceTablet = try Session(
                try await fixture.client.login(appKey: fixture.appKey, username: "user0", platform: "android"))
            let aliceSocket = try await IMTestClient.connect(port: fixture.live.port, token: aliceTablet.imToken)
            defer { aliceSocket.close() }
            let blocked = try await fixture.client.send(
                "PUT", "/api/im/blocks/\(alice.userId)", headers: ["Authorization": "Bearer \(bob.accessToken)"])
            #expect(blocked.status == 201, "\(blocked.text)")

            // 1:1: refused with the send's code, over REST and the WebSocket; nothing stored, nothing rings.
            let refused = try await fixture.client.post(
                "/api/calls", json: ["participantIds": [bob.userId], "mediaType": "audio"], token: alice.accessToken)
            Self.expect(refused, 403, 1119)
            await Live.expectFrameError(1119) {
                try await aliceSocket.request("call_invite", ["participantIds": [bob.userId], "mediaType": "video"])
            }
            #expect(try await Self.callCount(fixture) == 0)

            // Multi-party: the refused callee answers busy (as a refused send says no more); the others ring.
            let call = try await Live.invite(fixture, alice, [bob, carol])
            let callId = try #require(call["callId"] as? String)
            #expect(call["state"] as? String == "ringing")
            #expect(try await Self.participantState(fixture, callId, bob.userId) == "busy")
            #expect(try await Self.participantState(fixture, callId, carol.userId) == "ringing")
            let busy = Live.data(try await aliceSocket.next("call_rejected"))
            #expect(busy["userId"] as? String == bob.userId)
            #expect(busy["reason"] as? String == "busy")
            #expect(try await Live.act(fixture, "cancel", callId, as: alice).status == 200)
            // The block's other direction is no verdict of a send from bob: his call to alice rings.
            let back = try await Live.invite(fixture, bob, [alice])
            #expect(back["state"] as? String == "ringing")
            #expect(
                try await Live.act(fixture, "cancel", try #require(back["callId"] as? String), as: bob).status == 200)

            // The app's friends-only policy: strangers cannot ring each other.
            _ = try await fixture.database.query(
                "UPDATE apps SET direct_messages = 'friends' WHERE id = \(fixture.appId)")
            let stranger = try await fixture.client.post(
                "/api/calls", json: ["participantIds": [carol.userId], "mediaType": "audio"], token: alice.accessToken)
            Self.expect(stranger, 403, 1120)
            let allRefused = try await Live.invite(fixture, alice, [bob, carol])
            #expect(allRefused["state"] as? String == "ended")
            #expect(allRefused["endReason"] as? String == "busy")
        }
    }

    @Test func aUserAcceptingTwoCallsAtOnceOnTwoDevicesGetsOne() async throws {
        try await MessagingFixture.run { fixture in
            let users = try await fixture.users(4)
            let (alice, bob, carol, dave) = (users[0], users[1], users[2], users[3])
            let bobAndroid = try Session(
                try await fixture.client.login(appKey: fixture.appKey, username: "user1", platform: "android"))
            for round in 0..<5 {
                // Two callers ring bob at once (call waiting); his two devices accept one each at the same moment.
                let first = try #require(try await Live.invite(fixture, alice, [bob])["callId"] as? String)
                let second = try #require(try await Live.invite(fixture, carol, [bob])["callId"] as? String)
                async let phone = Live.act(fixture, "accept", first, as: bob)
                async let tablet = Live.act(fixture, "accept", second, as: bobAndroid)
                let answers = try await [phone, tablet]
                #expect(answers.map(\.status).sorted() == [200, 409], "round \(round)")
                #expect(answers.compactMap(\.code).sorted() == [0, 1708], "round \(round)")
                let accepted = try await fixture.database.query(
                    """
                    SELECT count(*) AS n FROM call_participants p JOIN calls c ON c.id = p.call_id
                    WHERE p.user_id = \(bob.userId) AND p.state = 'accepted' AND c.state <> 'ended'
                    """)
                #expect(try accepted[0].decode("n", as: Int.self) == 1)
                // In a call, bob can start none; dave's call to him answers busy.
                let (won, lost) = answers[0].status == 200 ? (first, second) : (second, first)
                Self.expect(
                    try await fixture.client.post(
                        "/api/calls", json: ["participantIds": [dave.userId], "mediaType": "audio"],
                        token: bob.accessToken), 409, 1708)
                #expect(try await Live.invite(fixture, dave, [bob])["endReason"] as? String == "busy")
                #expect(try await Live.act(fixture, "hangup", won, as: bob).status == 200)
                #expect(try await Live.act(fixture, "cancel", lost, as: lost == first ? alice : carol).status == 200)
            }
        }
    }

    @Test func twoUsersCallingEachOtherAtOnceGetOneCall() async throws {
        try await MessagingFixture.run { fixture in
            let users = try await fixture.users(2)
            let (alice, bob) = (users[0], users[1])
            for round in 0..<5 {
                async let fromAlice = fixture.client.post(
                    "/api/calls", json: ["participantIds": [bob.userId], "mediaType": "audio"], token: alice.accessToken
                )
                async let fromBob = fixture.client.post(
                    "/api/calls", json: ["participantIds": [alice.userId], "mediaType": "audio"], token: bob.accessToken
                )
                let answers = try await [fromAlice, fromBob]
                // Whichever commits second finds its callee in the first (a caller is in their call): busy.
                #expect(
                    answers.map { $0.data["state"] as? String }.sorted { ($0 ?? "") < ($1 ?? "") } == [
                        "ended", "ringing",
                    ], "round \(round)")
                let live = try #require(answers.first { $0.data["state"] as? String == "ringing" })
                let caller = live.data["callerId"] as? String == alice.userId ? alice : bob
                #expect(
                    try await Live.act(fixture, "cancel", try #require(live.data["callId"] as? String), as: caller)
                        .status == 200)
            }
        }
    }

    @Test func deletingAnAccountHangsUpItsCalls() async throws {
        try await MessagingFixture.run { fixture in
            let users = try await fixture.users(3)
            let (alice, bob, carol) = (users[0], users[1], users[2])
            let aliceSocket = try await IMTestClient.connect(port: fixture.live.port, token: alice.imToken)
            let carolSocket = try await IMTestClient.connect(port: fixture.live.port, token: carol.imToken)
            defer { [aliceSocket, carolSocket].forEach { $0.close() } }

            // bob rings (alice's call) and is deleted: he rejected it, as a hangup of a ringing callee does.
            let ringing = try #require(try await Live.invite(fixture, alice, [bob])["callId"] as? String)
            #expect(
                try await fixture.live.app.accountDeletion.delete(appId: fixture.appId, userId: bob.userId)
                    != .unknownUser)
            let ended = Live.data(
                try await aliceSocket.next("call_ended") { Live.data($0)["callId"] as? String == ringing })
            #expect(ended["reason"] as? String == "rejected")
            #expect(ended["userId"] as? String == bob.userId)
            #expect(try await Self.recordCount(fixture.database, ringing) == 1)

            // alice is in a call with carol and is deleted: carol's call ends, and carol is free for the next.
            let active = try #require(try await Live.invite(fixture, alice, [carol])["callId"] as? String)
            #expect(try await Live.act(fixture, "accept", active, as: carol).status == 200)
            _ = try await fixture.live.app.accountDeletion.delete(appId: fixture.appId, userId: alice.userId)
            let hungUp = Live.data(
                try await carolSocket.next("call_ended") { Live.data($0)["callId"] as? String == active })
            #expect(hungUp["reason"] as? String == "hangup")
            #expect(hungUp["userId"] as? String == alice.userId)
            let carolsCalls = try await fixture.client.get("/api/calls", token: carol.accessToken)
            #expect((carolsCalls.data["calls"] as? [[String: Any]])?.isEmpty == true)
            let dave = try await fixture.users(1, prefix: "dave")[0]
            #expect(try await Live.invite(fixture, dave, [carol])["state"] as? String == "ringing")
        }
    }

    /// Moves a call's deadline to now: the timeout is a column, so this is the deadline passing, without a wait.
    static func makeDue(_ database: PostgresClient, _ callId: String) async throws {
        _ = try await database.query("UPDATE calls SET timeout_at = clock_timestamp() WHERE id = \(callId)")
    }

    static func recordCount(_ database: PostgresClient, _ callId: String) async throws -> Int {
        try await database.query(
            "SELECT count(*) AS n FROM messages WHERE msg_type LIKE 'call%' AND client_msg_id LIKE \(callId + ":%")"
        )[0].decode("n", as: Int.self)
    }

    /// The only instance stops while a call rings and starts again on the same database: the restarted one times the
    /// call out, once.
    @Test func aRingingCallOutlivesARestartAndTimesOutOnce() async throws {
        try await withDatabase { url in
            let master = MasterKey.generateHex()
            let sweeping = ["PARLEY_CALL_SWEEP_MS": "100"]
            let first = try await LiveApp(databaseURL: url, masterKeyHex: master, environment: sweeping)
            var restarted: LiveApp?
            do {
                let (app, secret) = try await first.createApp()
                let fixture = MessagingFixture(live: first, appKey: app.appKey, appId: app.id, secret: secret)
                let users = try await fixture.users(2)
                let (alice, bob) = (users[0], users[1])
                let callId = try #require(
                    try await Live.invite(fixture, alice, [bob], body: ["timeoutSeconds": 120])["callId"] as? String)
                await first.stop()

                let second = try await LiveApp(databaseURL: url, masterKeyHex: master, environment: sweeping)
                restarted = second
                let aliceSocket = try await IMTestClient.connect(port: second.port, token: alice.imToken)
                let bobSocket = try await IMTestClient.connect(port: second.port, token: bob.imToken)
                defer { [aliceSocket, bobSocket].forEach { $0.close() } }
                let again = MessagingFixture(live: second, appKey: app.appKey, appId: app.id, secret: secret)
                let live = try await again.client.get("/api/calls", token: bob.accessToken)
                #expect((live.data["calls"] as? [[String: Any]])?.map { $0["callId"] as? String } == [callId])

                try await Self.makeDue(second.app.database, callId)
                for socket in [aliceSocket, bobSocket] {
                    #expect(Live.data(try await socket.next("call_timeout"))["callId"] as? String == callId)
                    #expect(Live.data(try await socket.next("call_ended"))["reason"] as? String == "timeout")
                }
                #expect(try await bobSocket.collect("call_timeout", for: .seconds(1)).isEmpty)
                #expect(try await Self.recordCount(second.app.database, callId) == 1)
                await second.stop()
            } catch {
                await first.stop()
                await restarted?.stop()
                throw error
            }
        }
    }

    /// Caller on one instance, callee on the other: the caller's instance restarts while the call rings and the
    /// deadline passes; the other times the call out, and the restarted one does not again.
    @Test func aTimeoutWhileTheCallersInstanceRestartsFiresOnce() async throws {
        try await withDatabase { url in
            let master = MasterKey.generateHex()
            let sweeping = ["PARLEY_CALL_SWEEP_MS": "100"]
            let first = try await LiveApp(databaseURL: url, masterKeyHex: master, environment: sweeping)
            let other = try await LiveApp(databaseURL: url, masterKeyHex: master, environment: sweeping)
            var restarted: LiveApp?
            do {
                let (app, secret) = try await first.createApp()
                let fixture = MessagingFixture(live: first, appKey: app.appKey, appId: app.id, secret: secret)
                let users = try await fixture.users(2)
                let (alice, bob) = (users[0], users[1])
                let bobSocket = try await IMTestClient.connect(port: other.port, token: bob.imToken)
                defer { bobSocket.close() }
                let callId = try #require(
                    try await Live.invite(fixture, alice, [bob], body: ["timeoutSeconds": 120])["callId"] as? String)
                #expect(Live.data(try await bobSocket.next("call_invited"))["callId"] as? String == callId)

                await first.stop()
                try await Self.makeDue(other.app.database, callId)
                #expect(Live.data(try await bobSocket.next("call_timeout"))["callId"] as? String == callId)
                let second = try await LiveApp(databaseURL: url, masterKeyHex: master, environment: sweeping)
                restarted = second
                let aliceSocket = try await IMTestClient.connect(port: second.port, token: alice.imToken)
                defer { aliceSocket.close() }
                // Both instances sweep now: nothing fires a second time.
                #expect(try await bobSocket.collect("call_timeout", for: .seconds(1)).isEmpty)
                #expect(try await aliceSocket.collect("call_timeout", for: .milliseconds(200)).isEmpty)
                #expect(try await Self.recordCount(second.app.database, callId) == 1)
                let view = try await second.client().get("/api/calls/\(callId)", token: alice.accessToken)
                #expect(view.data["state"] as? String == "ended")
                #expect(view.data["endReason"] as? String == "timeout")
                await second.stop()
                await other.stop()
            } catch {
                await first.stop()
                await other.stop()
                await restarted?.stop()
                throw error
            }
        }
    }
}
