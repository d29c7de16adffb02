import Foundation
import ParleyHTTP
import ParleyJSON
import Testing

@testable import ParleyRealtime

/// The pure parts of chat rooms: a connection's membership, the per-loop counts, the history query, the inputs and
/// the relay descriptors.
struct RoomStateTests {
    @Test func membershipIsBoundedIdempotentAndEmptiedByClose() {
        var rooms = RoomMembership(limit: 2)
        #expect(rooms.enter(1) == .entered)
        #expect(rooms.enter(1) == .alreadyInside)
        #expect(rooms.enter(2) == .entered)
        #expect(rooms.isFull)
        #expect(rooms.enter(3) == .full)
        #expect(rooms.enter(2) == .alreadyInside)
        #expect(rooms.leave(1) == true)
        #expect(rooms.leave(1) == false)
        #expect(rooms.enter(3) == .entered)
        #expect(rooms.close() == [2, 3])
        #expect(rooms.rooms.isEmpty)
        // Closed: an enter answered after the socket closed leaves nothing behind.
        #expect(rooms.enter(4) == .closed)
        #expect(!rooms.contains(4))
    }

    @Test func countsArePerLoopAndReportOnlyChangedRooms() {
        var counts = RoomCounts<Int>()
        let a = RoomKey(appId: 1, roomId: 10)
        let b = RoomKey(appId: 1, roomId: 11)
        counts.add(a, on: 0)
        counts.add(a, on: 0)
        counts.add(a, on: 1)
        counts.add(b, on: 1)
        #expect(counts.total(a) == 3)
        #expect(Set(counts.loops(a)) == [0, 1])
        #expect(Dictionary(uniqueKeysWithValues: counts.takeChanged().map { ($0.key, $0.online) }) == [a: 3, b: 1])
        #expect(counts.takeChanged().isEmpty)
        counts.remove(b, on: 1)
        counts.remove(b, on: 1) // already gone: no negative counts
        counts.remove(a, on: 1)
        #expect(counts.loops(a) == [0])
        #expect(counts.loops(b).isEmpty)
        #expect(Dictionary(uniqueKeysWithValues: counts.takeChanged().map { ($0.key, $0.online) }) == [a: 2, b: 0])
        counts.markAllChanged()
        #expect(counts.takeChanged().map(\.key) == [a])
        counts.removeAll(a)
        #expect(counts.total(a) == 0)
        #expect(counts.takeChanged().map(\.online) == [0])
    }

    @Test func historyQueryReadsLimitCursorAndTimeBounds() throws {
        #expect(try RoomHistoryQuery(HTTPQuery(nil)) == RoomHistoryQuery(limit: 20))
        #expect(
            try RoomHistoryQuery(HTTPQuery("limit=5&cursor=42&begin=1000&end=2000"))
                == RoomHistoryQuery(cursor: 42, begin: 1000, end: 2000, limit: 5))
        // Seed 002 sends `lastid 0` and `end 0` for "from the newest".
        #expect(try RoomHistoryQuery(HTTPQuery("cursor=0&end=0")) == RoomHistoryQuery(limit: 20))
        for bad in ["limit=0", "limit=101", "cursor=x", "cursor=-1", "begin=-1", "begin=3&end=2", "end=x"] {
            #expect(throws: APIError.self, "\(bad)") { try RoomHistoryQuery(HTTPQuery(bad)) }
        }
    }

    @Test func roomIDsAreDigitsAsStringsOrNumbers() throws {
        #expect(try RoomID.parse(.string("17"), field: "f") == 17)
        #expect(try RoomID.parse(.number(JSONNumber(17)), field: "f") == 17)
        for bad: JSONValue? in [
            nil, .null, .string(""), .string("0"), .string("017"), .string("-1"), .string("1.5"),
            .number(JSONNumber(-4)), .bool(true), .string(String(repeating: "9", count: 19)),
        ] {
            #expect(throws: APIError.self) { try RoomID.parse(bad, field: "f") }
        }
    }

    @Test func createAndSendInputsAreCheckedFieldByField() throws {
        let created = try RoomCreateRequest(["name": " Lobby ", "ex": ["k": 1]], allowsCreator: false)
        #expect(created == RoomCreateRequest(name: "Lobby", ex: #"{"k":1}"#))
        // Only the admin route names a creator; users are the creators of their rooms.
        #expect(try RoomCreateRequest(["name": "x", "creatorId": "bob"], allowsCreator: false).creatorId == nil)
        #expect(try RoomCreateRequest(["name": "x", "creatorId": "bob"], allowsCreator: true).creatorId == "bob")
        let bad: [JSONObject] = [
            [:], ["name": 3], ["name": " "], ["name": .string(String(repeating: "n", count: 129))],
            ["name": "x", "ex": .string(String(repeating: "e", count: 4097))], ["name": "x", "creatorId": "no spaces"],
            ["name": "a\u{0}b"], ["name": "x", "ex": "a\u{0}"],
        ]
        for object in bad {
            #expect(throws: APIError.self) { try RoomCreateRequest(object, allowsCreator: true) }
        }
        let send = try RoomSendRequest([
            "toId": 9, "chatType": "room", "msgType": "custom", "content": "in", "noUnread": true,
        ])
        #expect(send.roomId == 9)
        #expect(send.send.toId == "9")
        #expect(send.send.noUnread)
        for object: JSONObject in [
            ["msgType": "text", "content": "x"], ["toId": "9", "content": "x"], ["toId": "9", "msgType": "text"],
            ["toId": "9", "msgType": "text", "content": "x", "noUnread": "yes"],
            ["toId": "9", "msgType": "text", "content": "x", "clientMsgId": 3],
        ] {
            #expect(throws: APIError.self) { try RoomSendRequest(object) }
        }
    }

    @Test func descriptorsRoundTripAndLargeMessagesTravelById() throws {
        let message = RoomMessage(
            id: 5, appId: 2, roomId: 3, fromId: "alice", msgType: "text", content: "hi \"there\"", extra: nil,
            clientMsgId: "c1", command: false, createdAt: Date(timeIntervalSince1970: 1_700_000_000.123))
        let json = message.jsonBytes()
        let inline = RoomDescriptor.message(message, json: json)
        #expect(inline == .message(RoomKey(appId: 2, roomId: 3), json: json))
        let key = RoomKey(appId: 2, roomId: 3)
        for descriptor in [inline, .messageID(key, id: 5), .dismissed(key)] {
            let object = try #require(try JSONValue.parse(descriptor.serialized()).objectValue)
            #expect(RoomDescriptor.kinds.contains(try #require(object["k"]?.stringValue)))
            #expect(RoomDescriptor.parse(object) == descriptor)
        }
        var large = message
        large.content = String(repeating: "x", count: RoomDescriptor.maxInlineBytes)
        #expect(RoomDescriptor.message(large, json: large.jsonBytes()) == .messageID(key, id: 5))
        // Other instances' kinds are not rooms'; malformed room descriptors are dropped.
        for kind in ["m", "e", "v", "r", "c", "t", "u", "o", "n", "p"] { #expect(!RoomDescriptor.kinds.contains(kind)) }
        #expect(RoomDescriptor.parse(["k": "R", "a": 1, "r": 2]) == nil)
        #expect(RoomDescriptor.parse(["k": "Ri", "a": 1, "r": 2, "id": "x"]) == nil)
        #expect(RoomDescriptor.parse(["k": "Rd", "a": 1]) == nil)
        #expect(RoomDescriptor.parse(["k": "Rz", "a": 1, "r": 2]) == nil)
    }

    @Test func aRoomMessageHasTheMessageEventsShape() throws {
        let message = RoomMessage(
            id: 5, appId: 2, roomId: 3, fromId: "alice", msgType: "custom", content: "alice 进入房间", extra: nil,
            clientMsgId: nil, command: true, createdAt: Date(timeIntervalSince1970: 1_700_000_000.123))
        let object = try #require(try JSONValue.parse(message.jsonBytes()).objectValue)
        #expect(object["id"] == "5")
        #expect(object["roomId"] == "3")
        #expect(object["conversationId"] == "3")
        #expect(object["toId"] == "3")
        #expect(object["chatType"] == "room")
        #expect(object["content"] == "alice 进入房间")
        #expect(object["noUnread"] == true)
        #expect(object["createdAt"]?.stringValue == ISO8601.format(message.createdAt))
    }
}
