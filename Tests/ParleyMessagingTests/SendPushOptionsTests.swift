import Foundation
import ParleyHTTP
import ParleyJSON
import ParleyLiveSupport
import ParleyPostgres
import ParleyTestSupport
import Testing

@testable import ParleyMessaging

/// A send's `push {title, body, sound, disabled}` and `noUnread` (issue 21): checked, stored with the message on
/// every send path, and `noUnread` kept to custom messages.
@Suite("Send push options")
struct SendPushOptionsTests {
    @Test func pushOptionsAreCheckedNamingTheField() throws {
        func parse(_ json: String) throws(APIError) -> MessagePushOptions? {
            try MessagePushOptions.parse(try! JSONValue.parse(Array(json.utf8)), prefix: "data.")
        }
        #expect(try parse("null") == nil)
        let full = try #require(
            try parse(#"{"title":"u_alice","body":"You have a new call","sound":"phone_ringing.mp3"}"#))
        #expect(full == MessagePushOptions(title: "u_alice", body: "You have a new call", sound: "phone_ringing.mp3"))
        #expect(full.stored == #"{"title":"u_alice","body":"You have a new call","sound":"phone_ringing.mp3"}"#)
        #expect(try parse(#"{"disabled":false}"#)?.stored == nil, "nothing to store: the default push")
        #expect(try parse(#"{"disabled":true}"#)?.stored == #"{"disabled":true}"#)
        #expect(try parse(#"{"title":"\#(String(repeating: "字", count: 100))"}"#)?.title?.count == 100)
        let refused: [(String, String)] = [
            (#"[]"#, "`data.push` must be an object"),
            (#"{"tittle":"x"}"#, "`data.push.tittle`"),
            (#"{"title":""}"#, "`data.push.title`"),
            (#"{"title":"\#(String(repeating: "x", count: 101))"}"#, "`data.push.title`"),
            (#"{"body":"\#(String(repeating: "x", count: 401))"}"#, "`data.push.body`"),
            (#"{"body":"a\u0007b"}"#, "`data.push.body`"),
            (#"{"body":5}"#, "`data.push.body`"),
            (#"{"sound":"../../etc/passwd"}"#, "`data.push.sound`"),
            (#"{"sound":".hidden"}"#, "`data.push.sound`"),
            (#"{"sound":"\#(String(repeating: "s", count: 65))"}"#, "`data.push.sound`"),
            (#"{"disabled":"yes"}"#, "`data.push.disabled`"),
        ]
        for (json, field) in refused {
            #expect(throws: APIError.self, "\(json)") { try parse(json) }
            do {
                _ = try parse(json)
            } catch {
                #expect(error.code == 1002 && error.message.contains(field), "\(json): \(error.message)")
            }
        }
    }

    @Test func userSendsStorePushOptionsAndNoUnreadOnCustomMessagesOnly() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            let (alice, bob) = (users[0], users[1])
            func stored(_ id: Any?) async throws -> (options: String?, uncounted: Bool) {
                let text = try #require(id as? String)
                let id = try #require(Int64(text))
                let row = try await fx.database.query(
                    "SELECT push_options::text AS options, uncounted FROM messages WHERE id = \(id)")[0]
                return (try row.decode("options"), try row.decode("uncounted"))
            }
            // Sent concurrently: REST sends go through the send batcher, which must hand these to the single send.
            let sends = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for index in 0..<6 {
                    group.addTask {
                        try await fx.client.post(
                            "/api/im/messages",
                            json: [
                                "toId": bob.userId, "chatType": "single", "msgType": "custom",
                                "content": ["cmd": "ring", "n": index], "noUnread": index % 2 == 0,
                                "push": ["body": "You have a new call", "sound": "phone_ringing.mp3", "title": "A"],
                            ], token: alice.accessToken)
                    }
                }
                var all: [TestResponse] = []
                for try await response in group { all.append(response) }
                return all
            }
            #expect(sends.allSatisfy { $0.status == 201 }, "\(sends.map(\.text))")
            var uncountedSends = 0
            for send in sends {
                let row = try await stored(send.data["id"])
                #expect(row.options == #"{"body": "You have a new call", "sound": "phone_ringing.mp3", "title": "A"}"#)
                if row.uncounted { uncountedSends += 1 }
            }
            #expect(uncountedSends == 3)
            let conversationId = ConversationID.single(alice.userId, bob.userId)
            #expect(try await fx.conversation(bob, conversationId)?["unreadCount"] as? Int == 3)

            // noUnread is for custom messages; a bad push option names its field; nothing is stored for either.
            let before = try await fx.messageCount()
            let text = try await fx.client.post(
                "/api/im/messages",
                json: ["toId": bob.userId, "chatType": "single", "msgType": "text", "content": "hi", "noUnread": true],
                token: alice.accessToken)
            #expect(text.status == 400 && text.code == 1002 && text.text.contains("noUnread"))
            let badSound = try await fx.client.post(
                "/api/im/messages",
                json: [
                    "toId": bob.userId, "chatType": "single", "msgType": "text", "content": "hi",
                    "push": ["sound": "a/b"],
                ], token: alice.accessToken)
            #expect(badSound.status == 400 && badSound.code == 1002 && badSound.text.contains("push.sound"))
            #expect(try await fx.messageCount() == before)

            // Without options nothing is stored (NULL), as before.
            let plain = try await fx.sendOK(alice, to: bob.userId, content: "plain")
            #expect(try await stored(plain["id"]).options == nil)

            // The admin API takes `push` too; `options.noPush` turns it off whatever `push` says.
            let admin = try await fx.admin(
                "POST", "/api/admin/messages",
                json: [
                    "fromId": alice.userId, "toId": bob.userId, "chatType": "single", "msgType": "text",
                    "content": "from the backend", "push": ["title": "Backend"], "options": ["noPush": true],
                ])
            #expect(admin.status == 201, "\(admin.text)")
            #expect(try await stored(admin.data["id"]).options == #"{"title": "Backend", "disabled": true}"#)
            let badAdmin = try await fx.admin(
                "POST", "/api/admin/messages",
                json: [
                    "toId": bob.userId, "chatType": "single", "msgType": "text", "content": "x",
                    "push": ["title": 5],
                ])
            #expect(badAdmin.status == 400 && badAdmin.code == 1002 && badAdmin.text.contains("push.title"))
        }
    }
}
