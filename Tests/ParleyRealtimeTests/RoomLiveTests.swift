import Foundation
import ParleyLiveSupport
import ParleyPostgres
import ParleyTestSupport
import Testing

@testable import ParleyRealtime

/// Chat rooms end to end on a live server: REST to create and read, WebSocket frames to enter, send and leave.
@Suite("Chat rooms", .serialized)
struct RoomLiveTests {
    static func createRoom(_ fx: MessagingFixture, _ session: Session, name: String = "Lobby") async throws -> String {
        let response = try await fx.client.post("/api/im/rooms", json: ["name": name], token: session.accessToken)
        guard response.status == 201, let id = response.string("roomId") else {
            throw TestFailure("room not created: \(response.status) \(response.text)")
        }
        return id
    }

    static func text(_ roomId: String, _ content: String, extra: [String: Any] = [:]) -> [String: Any] {
        ["toId": roomId, "chatType": "room", "msgType": "text", "content": content].merging(extra) { _, new in new }
    }

    static func contents(_ messages: Any?) -> [String] {
        (messages as? [[String: Any]] ?? []).compactMap { $0["content"] as? String }
    }

    @Test func whoeverIsInsideGetsTheRoomsMessagesAndTheEnterAckCarriesRecentHistory() async throws {
        try await MessagingFixture.run { fx in
            let alice = try await GatewayTests.device(fx, username: "alice")
            let bob = try await GatewayTests.device(fx, username: "bob")
            let carol = try await GatewayTests.device(fx, username: "carol")
            let roomId = try await Self.createRoom(fx, alice.session)

            let entered = try await alice.socket.request("room_enter", ["roomId": roomId])
            let room = try #require(entered["room"] as? [String: Any])
            #expect(room["roomId"] as? String == roomId)
            #expect(room["name"] as? String == "Lobby")
            #expect(room["creatorId"] as? String == alice.session.userId)
            #expect(room["online"] as? Int == 1)
            #expect((entered["messages"] as? [Any])?.isEmpty == true)

            let first = try await alice.socket.request("send", Self.text(roomId, "one"))
            #expect(first["chatType"] as? String == "room")
            #expect(first["toId"] as? String == roomId)
            #expect(first["conversationId"] as? String == roomId)
            _ = try await alice.socket.request("send", Self.text(roomId, "two"))

            // Bob enters by the number, as seed 002 passes room ids: the ack has the history, newest first.
            let bobEntered = try await bob.socket.request("room_enter", ["roomId": Int(roomId)!])
            #expect(Self.contents(bobEntered["messages"]) == ["two", "one"])
            #expect((bobEntered["room"] as? [String: Any])?["online"] as? Int == 2)

            // The command "X entered the room" reaches whoever is inside, and is not history.
            _ = try await bob.socket.request(
                "send",
                [
                    "toId": roomId, "chatType": "room", "msgType": "custom", "content": "bob 进入房间",
                    "noUnread": true,
                ])
            let command = try #require(try await alice.socket.next("message")["data"] as? [String: Any])
            #expect(command["content"] as? String == "bob 进入房间")
            #expect(command["noUnread"] as? Bool == true)

            let sent = try await bob.socket.request("send", Self.text(roomId, "hello room"))
            let atAlice = try #require(try await alice.socket.next("message")["data"] as? [String: Any])
            #expect(atAlice["id"] as? String == sent["id"] as? String)
            #expect(atAlice["content"] as? String == "hello room")
            #expect(atAlice["fromId"] as? String == bob.session.userId)
            // Carol is not inside: nothing reaches her, and she cannot send there.
            #expect(try await carol.socket.collect("message", for: .milliseconds(300)).isEmpty)
            do {
                _ = try await carol.socket.request("send", Self.text(roomId, "outsider"))
                Issue.record("a send from outside the room was accepted")
            } catch let error as IMTestError {
                #expect(error.code == 1506)
            }

            // REST: the room with its online count, and its history (no command), newest first, paged by cursor.
            let info = try await fx.client.get("/api/im/rooms/\(roomId)", token: carol.session.accessToken)
            #expect(info.status == 200)
            #expect(info.data["online"] as? Int == 2)
            let page = try await fx.client.get(
                "/api/im/rooms/\(roomId)/messages?limit=2", token: carol.session.accessToken)
            #expect(page.status == 200)
            #expect(Self.contents(page.data["messages"]) == ["hello room", "two"])
            #expect(page.data["hasMore"] as? Bool == true)
            let cursor = try #require(page.data["nextCursor"] as? String)
            let rest = try await fx.client.get(
                "/api/im/rooms/\(roomId)/messages?limit=2&cursor=\(cursor)", token: carol.session.accessToken)
            #expect(Self.contents(rest.data["messages"]) == ["one"])
            #expect(rest.data["hasMore"] as? Bool == false)

            // Leaving: no more messages; leaving again is not an error.
            let left = try await bob.socket.request("room_leave", ["roomId": roomId])
            #expect(left["left"] as? Bool == true)
            #expect(try await bob.socket.request("room_leave", ["roomId": roomId])["left"] as? Bool == false)
            _ = try await alice.socket.request("send", Self.text(roomId, "after bob left"))
            #expect(try await bob.socket.collect("message", for: .milliseconds(300)).isEmpty)
            // A closed socket leaves every room it was inside.
            alice.socket.close()
            _ = try await eventually {
                try await fx.client.get("/api/im/rooms/\(roomId)", token: carol.session.accessToken)
                    .data["online"] as? Int == 0
            }
            let after = try await fx.client.get("/api/im/rooms/\(roomId)", token: carol.session.accessToken)
            #expect(after.data["online"] as? Int == 0)
        }
    }

    @Test func badRoomRequestsAnswerClearCodes() async throws {
        try await MessagingFixture.run(environment: ["PARLEY_ROOM_MAX_PER_CONNECTION": "2"]) { fx in
            let alice = try await GatewayTests.device(fx, username: "alice")
            let token = alice.session.accessToken
            let rooms = [
                try await Self.createRoom(fx, alice.session, name: "a"),
                try await Self.createRoom(fx, alice.session, name: "b"),
                try await Self.createRoom(fx, alice.session, name: "c"),
            ]
            func code(_ type: String, _ data: [String: Any]) async throws -> Int? {
                do {
                    _ = try await alice.socket.request(type, data)
                    return nil
                } catch let error as IMTestError {
                    return error.code
                }
            }
            #expect(try await code("room_enter", [:]) == 1002)
            #expect(try await code("room_enter", ["roomId": "abc"]) == 1002)
            #expect(try await code("room_enter", ["roomId": -3]) == 1002)
            #expect(try await code("room_enter", ["roomId": "999999999"]) == 1505)
            #expect(try await code("send", Self.text("0", "x")) == 1002)
            #expect(try await code("send", Self.text(rooms[0], "not inside")) == 1506)
            _ = try await alice.socket.request("room_enter", ["roomId": rooms[0]])
            _ = try await alice.socket.request("room_enter", ["roomId": rooms[0]])
            _ = try await alice.socket.request("room_enter", ["roomId": rooms[1]])
            #expect(try await code("room_enter", ["roomId": rooms[2]]) == 1507)
            #expect(
                try await code(
                    "send", ["toId": rooms[0], "chatType": "room", "msgType": "nope", "content": "x"]) == 1002)
            #expect(
                try await code(
                    "send", ["toId": rooms[0], "chatType": "room", "msgType": "text", "content": "x", "noUnread": true])
                    == 1002)
            // Nothing refused was stored.
            let history = try await fx.client.get("/api/im/rooms/\(rooms[0])/messages", token: token)
            #expect((history.data["messages"] as? [Any])?.isEmpty == true)

            // REST: room messages go over the WebSocket; bad ids, bodies and queries are 1002; unknown rooms 1505.
            let rest = try await fx.send(alice.session, to: rooms[0], chatType: "room")
            #expect(rest.status == 400)
            #expect(rest.code == 1002)
            #expect(rest.message?.contains("WebSocket") == true)
            #expect(try await fx.client.get("/api/im/rooms/x1", token: token).code == 1002)
            #expect(try await fx.client.get("/api/im/rooms/123456789", token: token).code == 1505)
            #expect(try await fx.client.get("/api/im/rooms/123456789", token: token).status == 404)
            #expect(try await fx.client.get("/api/im/rooms/\(rooms[0])/messages?limit=0", token: token).code == 1002)
            #expect(try await fx.client.get("/api/im/rooms/\(rooms[0])/messages?cursor=x", token: token).code == 1002)
            #expect(
                try await fx.client.get("/api/im/rooms/\(rooms[0])/messages?begin=5&end=4", token: token).code == 1002)
            #expect(try await fx.client.post("/api/im/rooms", json: ["name": "  "], token: token).code == 1002)
            #expect(try await fx.client.post("/api/im/rooms", json: [:], token: token).code == 1002)
            #expect(
                try await fx.client.post(
                    "/api/im/rooms", json: ["name": "n", "ex": String(repeating: "x", count: 5000)], token: token
                ).code == 1002)
            #expect(try await fx.client.get("/api/im/rooms/\(rooms[0])").status == 401)
            // The socket still answers.
            _ = try await alice.socket.request("ping")
        }
    }

    @Test func historyIsBoundedAndDismissTellsWhoeverIsInside() async throws {
        try await MessagingFixture.run(environment: ["PARLEY_ROOM_HISTORY_MESSAGES": "3"]) { fx in
            let alice = try await GatewayTests.device(fx, username: "alice")
            let bob = try await GatewayTests.device(fx, username: "bob")
            let roomId = try await Self.createRoom(fx, alice.session)
            _ = try await alice.socket.request("room_enter", ["roomId": roomId])
            for n in 1...5 { _ = try await alice.socket.request("send", Self.text(roomId, "m\(n)")) }
            let entered = try await bob.socket.request("room_enter", ["roomId": roomId])
            #expect(Self.contents(entered["messages"]) == ["m5", "m4", "m3"])
            let page = try await fx.client.get("/api/im/rooms/\(roomId)/messages", token: bob.session.accessToken)
            #expect(Self.contents(page.data["messages"]) == ["m5", "m4", "m3"])
            #expect(page.data["hasMore"] as? Bool == false)

            // Only the creator dismisses; whoever is inside is told; then the room is gone.
            let refused = try await fx.client.delete("/api/im/rooms/\(roomId)", token: bob.session.accessToken)
            #expect(refused.status == 403)
            #expect(refused.code == 1508)
            let dismissed = try await fx.client.delete("/api/im/rooms/\(roomId)", token: alice.session.accessToken)
            #expect(dismissed.status == 200)
            let notice = try await bob.socket.next("room_dismissed")
            #expect((notice["data"] as? [String: Any])?["roomId"] as? String == roomId)
            #expect(try await fx.client.get("/api/im/rooms/\(roomId)", token: bob.session.accessToken).code == 1505)
            do {
                _ = try await bob.socket.request("send", Self.text(roomId, "gone"))
                Issue.record("a send to a dismissed room was accepted")
            } catch let error as IMTestError {
                #expect(error.code == 1506)
            }
        }
    }

    @Test func thePruneDeletesWhatTheHistoryBoundHides() async throws {
        try await MessagingFixture.run { fx in
            let alice = try await GatewayTests.device(fx, username: "alice")
            let busy = try await Self.createRoom(fx, alice.session, name: "busy")
            let quiet = try await Self.createRoom(fx, alice.session, name: "quiet")
            _ = try await alice.socket.request("room_enter", ["roomId": busy])
            _ = try await alice.socket.request("room_enter", ["roomId": quiet])
            for n in 1...5 { _ = try await alice.socket.request("send", Self.text(busy, "b\(n)")) }
            _ = try await alice.socket.request(
                "send", ["toId": busy, "chatType": "room", "msgType": "custom", "content": "cmd", "noUnread": true])
            _ = try await alice.socket.request("send", Self.text(quiet, "old"))
            _ = try await alice.socket.request("send", Self.text(quiet, "new"))
            // "old" was sent more than a day ago.
            _ = try await fx.database.query(
                "UPDATE room_messages SET created_at = now() - interval '25 hours' WHERE content = 'old'")

            let repository = RoomRepository(database: fx.database)
            // Busy keeps its newest 3 (the command is newer than them: the hours keep it); quiet loses "old".
            #expect(try await repository.prune(bound: RoomHistoryBound(messages: 3, hours: 24)) == 3)
            let left = try await fx.database.query("SELECT content FROM room_messages ORDER BY id")
            #expect(try left.map { try $0.decode("content", as: String.self) } == ["b3", "b4", "b5", "cmd", "new"])
            #expect(try await repository.prune(bound: RoomHistoryBound(messages: 3, hours: 24)) == 0)
        }
    }

    @Test func theAppsBackendCreatesAndDismissesRoomsWithSignedCalls() async throws {
        try await MessagingFixture.run { fx in
            let alice = try await GatewayTests.device(fx, username: "alice")
            let created = try await fx.admin("POST", "/api/admin/rooms", json: ["name": "Live", "ex": ["k": 1]])
            #expect(created.status == 201)
            let roomId = try #require(created.string("roomId"))
            #expect(created.data["creatorId"] is NSNull)
            #expect(created.string("ex") == #"{"k":1"#.appending("}"))
            let named = try await fx.admin(
                "POST", "/api/admin/rooms", json: ["name": "Named", "creatorId": alice.session.userId])
            #expect(named.string("creatorId") == alice.session.userId)
            #expect(
                try await fx.admin("POST", "/api/admin/rooms", json: ["name": "x", "creatorId": "bad id"]).code == 1002)
            #expect(try await fx.admin("POST", "/api/admin/rooms", json: ["name": "x"], secret: "wrong").status == 401)
            let unsigned = try await fx.client.post("/api/admin/rooms", json: ["name": "x"])
            #expect(unsigned.status == 401)

            _ = try await alice.socket.request("room_enter", ["roomId": roomId])
            let dismissed = try await fx.admin("DELETE", "/api/admin/rooms/\(roomId)")
            #expect(dismissed.status == 200)
            _ = try await alice.socket.next("room_dismissed")
            #expect(try await fx.admin("DELETE", "/api/admin/rooms/\(roomId)").code == 1505)
        }
    }

    @Test func twoInstancesOnOneDatabaseShareARoom() async throws {
        try await MessagingFixture.run { fx in
            let other = try await LiveApp(
                databaseURL: fx.live.app.configuration.databaseURL, masterKeyHex: fx.live.masterKeyHex)
            do {
                let second = MessagingFixture(live: other, appKey: fx.appKey, appId: fx.appId)
                let alice = try await GatewayTests.device(fx, username: "alice")
                let bobSession = try Session(try await second.client.register(appKey: fx.appKey, username: "bob"))
                let bob = try await IMTestClient.connect(port: other.port, token: bobSession.imToken)
                let roomId = try await Self.createRoom(fx, alice.session)
                _ = try await alice.socket.request("room_enter", ["roomId": roomId])
                _ = try await bob.request("room_enter", ["roomId": roomId])

                let sent = try await alice.socket.request("send", Self.text(roomId, "across"))
                let atBob = try #require(try await bob.next("message")["data"] as? [String: Any])
                #expect(atBob["id"] as? String == sent["id"] as? String)
                #expect(atBob["content"] as? String == "across")
                // Too large for a NOTIFY payload: it travels by id and is loaded on the other side.
                let big = String(repeating: "y", count: 7000)
                _ = try await bob.request("send", Self.text(roomId, big))
                let atAlice = try #require(try await alice.socket.next("message")["data"] as? [String: Any])
                #expect(atAlice["content"] as? String == big)

                // Each instance counts its own connections inside and writes them; both see two.
                _ = try await eventually(timeout: .seconds(15)) {
                    let here = try await fx.client.get("/api/im/rooms/\(roomId)", token: alice.session.accessToken)
                    let there = try await second.client.get("/api/im/rooms/\(roomId)", token: bobSession.accessToken)
                    return here.data["online"] as? Int == 2 && there.data["online"] as? Int == 2
                }
                let counted = try await fx.client.get("/api/im/rooms/\(roomId)", token: alice.session.accessToken)
                #expect(counted.data["online"] as? Int == 2)

                // A dismiss on one instance reaches the connections inside on the other.
                #expect(
                    try await fx.client.delete("/api/im/rooms/\(roomId)", token: alice.session.accessToken).status
                        == 200)
                _ = try await bob.next("room_dismissed")
                await other.stop()
            } catch {
                await other.stop()
                throw error
            }
        }
    }
}
