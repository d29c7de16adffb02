import ParleyJSON
import Testing

@testable import ParleyRealtime

/// The routed relay's pure parts: subject names and the per-recipient payload.
struct RelayRoutingTests {
    @Test(arguments: ["parley", "prod.parley", "a-b_c.d1"])
    func acceptsPrefixesOfPlainTokens(_ prefix: String) {
        #expect(RelaySubjects(prefix: prefix) != nil)
    }

    @Test(arguments: [
        "", ".parley", "parley.", "a..b", "a b", "a*", "a>", "par\u{0}ley", "é", String(repeating: "a", count: 65),
    ])
    func refusesPrefixesNATSWouldMisread(_ prefix: String) {
        #expect(RelaySubjects(prefix: prefix) == nil)
    }

    @Test func subjectsNameTheirTargetAndNothingElse() throws {
        let subjects = try #require(RelaySubjects(prefix: "p.x"))
        #expect(subjects.all == "p.x.all")
        #expect(subjects.room(RoomKey(appId: 3, roomId: 99)) == "p.x.r.3.99")
        let user = subjects.user(appId: 7, userId: "alice")
        #expect(user.hasPrefix("p.x.u.7."))
        #expect(user.split(separator: ".").count == 5)
        #expect(subjects.target(of: subjects.all) == .all)
        #expect(subjects.target(of: user) == .user)
        #expect(subjects.target(of: "p.x.r.3.99") == .room)
        #expect(subjects.target(of: "p.xall") == .unknown)
        #expect(subjects.target(of: "q.x.all") == .unknown)
        #expect(subjects.target(of: "p.x") == .unknown)
    }

    /// User ids are the app's strings: whatever they hold, the subject is one valid token, the same in every
    /// process (a fixed hash, not Swift's seeded one), and different users almost never share it.
    @Test func userKeysAreStableSafeTokens() {
        #expect(RelaySubjects.userKey("") == "cbf29ce484222325")
        #expect(RelaySubjects.userKey("a") == "af63dc4c8601ec8c")
        for id in ["a.b", "a b", "*", ">", "用户", "\u{0}", String(repeating: "x", count: 300)] {
            let key = RelaySubjects.userKey(id)
            #expect(key.count == 16)
            #expect(key.allSatisfy { $0.isHexDigit })
        }
        let keys = Set((0..<10_000).map { RelaySubjects.userKey("user\($0)") })
        #expect(keys.count == 10_000)
    }

    @Test(arguments: [
        (nil as String?, nil as String?, false), ("session-1", nil, true), (nil, "typer", false),
        ("s\"q\\\n", "x\u{1}y", true),
    ])
    func payloadsRoundTrip(origin: String?, excluded: String?, touches: Bool) throws {
        let frame: [UInt8] = Array("\u{81}\u{5}hello\n{\"a\":1}\n".utf8) + [0, 255, 10]
        let payload = UserDeliveryPayload(
            appId: 42, conversationId: "sg:g\n1", userId: "u\"1\n", origin: origin, excludedUserId: excluded,
            touchesSummary: touches, frame: frame)
        let decoded = try #require(UserDeliveryPayload(decoding: payload.encoded()))
        #expect(decoded == payload)
    }

    /// One header per event, one payload per recipient: each decodes to its own user and the same frame.
    @Test func oneHeaderServesEveryRecipient() throws {
        let header = UserDeliveryPayload.Header(
            appId: 1, conversationId: "sg:g", origin: "s", excludedUserId: nil, touchesSummary: true)
        for user in ["a", "b", "用户"] {
            let decoded = try #require(UserDeliveryPayload(decoding: header.payload(userId: user, frame: [1, 2, 3])))
            #expect(decoded.userId == user)
            #expect(decoded.frame == [1, 2, 3])
            #expect(decoded.origin == "s")
            #expect(decoded.touchesSummary)
        }
    }

    @Test(arguments: [
        "", "\n", "{}\n", "no header", #"{"a":1,"c":"x"}"# + "\n", #"{"a":"1","c":"x","u":"y"}"# + "\n",
        #"{"a":1,"c":2,"u":"y"}"# + "\n", #"{"a":1,"c":"x","u":"y""# + "\n", #"[1]"# + "\n",
    ])
    func refusesWhatIsNotAPayload(_ text: String) {
        #expect(UserDeliveryPayload(decoding: Array(text.utf8)) == nil)
    }
}
