import Foundation
import ParleyLiveSupport
import Testing

/// Malformed requests get a 4xx in the envelope and store nothing.
@Suite("Bad input", .serialized)
struct BadInputTests {
    @Test func malformedSendsAreRefusedAndNothingIsStored() async throws {
        try await MessagingFixture.run(environment: ["PARLEY_IM_MAX_TEXT_CHARS": "50"]) { fx in
            let users = try await fx.users(2)
            let (alice, bob) = (users[0], users[1])
            let before = try await fx.messageCount()
            let cases: [(String, [String: Any])] = [
                ("unknown msgType", ["msgType": "sticker", "content": "x"]),
                ("notify from a client", ["msgType": "notify", "content": ["event": "x"]]),
                ("unknown chatType", ["chatType": "channel"]),
                ("text not a string", ["content": ["text": "x"]]),
                ("empty text", ["content": ""]),
                ("oversized text", ["content": String(repeating: "a", count: 51)]),
                ("image without objectKey", ["msgType": "image", "content": ["width": 1, "height": 1]]),
                (
                    "image with a string width",
                    ["msgType": "image", "content": ["objectKey": "k", "width": "1", "height": 1]]
                ),
                (
                    "image with zero height",
                    ["msgType": "image", "content": ["objectKey": "k", "width": 1, "height": 0]]
                ),
                ("video without duration", ["msgType": "video", "content": ["objectKey": "k"]]),
                ("audio negative duration", ["msgType": "audio", "content": ["objectKey": "k", "durationSec": -1]]),
                ("file without size", ["msgType": "file", "content": ["objectKey": "k", "name": "a"]]),
                ("location out of range", ["msgType": "location", "content": ["lat": 91, "lng": 0]]),
                ("forward empty", ["msgType": "forward", "content": ["messages": []]]),
                (
                    "forward of forward",
                    ["msgType": "forward", "content": ["messages": [["msgType": "forward", "content": [:]]]]]
                ),
                (
                    "forward with bad inner",
                    ["msgType": "forward", "content": ["messages": [["msgType": "image", "content": [:]]]]]
                ),
                (
                    "custom too large",
                    ["msgType": "custom", "content": ["blob": String(repeating: "x", count: 17_000)]]
                ),
                ("extra too large", ["extra": String(repeating: "x", count: 5000)]),
                ("bad toId", ["toId": "has space"]),
                ("empty clientMsgId", ["clientMsgId": ""]),
                ("missing content", ["content": NSNull()]),
            ]
            for (name, overrides) in cases {
                var body: [String: Any] = [
                    "toId": bob.userId, "chatType": "single", "msgType": "text", "content": "ok",
                    "clientMsgId": UUID().uuidString,
                ]
                for (key, value) in overrides { body[key] = value }
                if overrides["content"] is NSNull { body.removeValue(forKey: "content") }
                let response = try await fx.client.post("/api/im/messages", json: body, token: alice.accessToken)
                #expect(response.status == 400, "\(name): \(response.status) \(response.text)")
                #expect(response.code == 1002, "\(name): \(response.text)")
                #expect(response.json["data"] is NSNull, "\(name)")
            }
            // Not JSON at all.
            let garbage = try await fx.client.send(
                "POST", "/api/im/messages",
                headers: ["Authorization": "Bearer \(alice.accessToken)"],
                body: Array("{nope".utf8))
            #expect(garbage.status == 400)
            #expect(garbage.code == 1001)
            #expect(try await fx.messageCount() == before)
        }
    }

    @Test func malformedIdsAndPagingAreRefused() async throws {
        try await MessagingFixture.run { fx in
            let user = try await fx.users(1)[0]
            let token = user.accessToken
            let bad: [(String, String)] = [
                ("POST", "/api/im/messages/abc/revoke"),
                ("POST", "/api/im/messages/-1/revoke"),
                ("POST", "/api/im/messages/99999999999999999999/revoke"),
                ("GET", "/api/im/conversations/nope/messages"),
                ("GET", "/api/im/conversations/si:b:a/messages"),
                ("GET", "/api/im/conversations/si:a/messages"),
                ("GET", "/api/im/conversations/sg:bad%20id/messages"),
                ("GET", "/api/im/conversations/si:a:b/messages?limit=0"),
                ("GET", "/api/im/conversations/si:a:b/messages?limit=101"),
                ("GET", "/api/im/conversations/si:a:b/messages?before=x"),
                ("GET", "/api/im/conversations/si:a:b/messages?before=5&after=1"),
                ("GET", "/api/im/conversations?limit=1000"),
                ("GET", "/api/im/conversations?offset=-1"),
                ("GET", "/api/im/groups/bad%20id"),
            ]
            for (method, target) in bad {
                let response = try await fx.client.send(method, target, headers: ["Authorization": "Bearer \(token)"])
                #expect(response.status == 400, "\(method) \(target): \(response.status) \(response.text)")
                #expect(response.code == 1002, "\(method) \(target): \(response.text)")
            }
            // A well-formed id of nothing: 404.
            #expect(try await fx.client.post("/api/im/messages/12345/revoke", token: token).code == 1102)
            // No token: 401.
            #expect(try await fx.client.get("/api/im/conversations").status == 401)
            // Bad group bodies.
            #expect(
                try await fx.client.post("/api/im/groups", json: ["name": "  ", "memberIds": []], token: token).code
                    == 1002)
            #expect(
                try await fx.client.post("/api/im/groups", json: ["name": "x", "memberIds": ["bad id"]], token: token)
                    .code == 1002)
            #expect(try await fx.client.post("/api/im/groups", json: ["name": "x"], token: token).code == 1002)
        }
    }
}
