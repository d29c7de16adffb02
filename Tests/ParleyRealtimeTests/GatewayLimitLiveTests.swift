import Foundation
import ParleyLiveSupport
import ParleyTestSupport
import ParleyWebSocket
import Testing

@testable import ParleyRealtime

/// The gateway's bounds over real sockets: the message size (the largest legitimate frame fits, more closes
/// 1009), the backlog of requests in bytes (4004), and the sockets of one session (probed past one limit, 4001 for
/// the silent; 4502 past the other).
@Suite("Realtime gateway limits", .serialized)
struct GatewayLimitLiveTests {
    @Test func aForwardOfFiftyMessagesFitsAndAFrameOverTheLimitCloses1009() async throws {
        try await MessagingFixture.run { fx in
            let alice = try await GatewayTests.device(fx, username: "alice")
            let bob = try await GatewayTests.device(fx, username: "bob")
            // As large as a forward may be: 50 messages, close to `maxForwardBytes` serialized.
            let messages = (0..<50).map { index in
                ["msgType": "text", "content": String(repeating: "ab", count: 1_250) + "\(index)"]
            }
            let sent = try await alice.socket.request(
                "send",
                [
                    "toId": bob.session.userId, "chatType": "single", "msgType": "forward",
                    "content": ["messages": messages],
                ])
            #expect(sent["msgType"] as? String == "forward")
            // One byte over the limit is refused from the frame's header, and the socket closes.
            let limit = RealtimeConfiguration.defaultMaxMessageBytes
            let prefix = #"{"type":"ping","reqId":"big","data":{"pad":""#
            let suffix = #""}}"#
            let oversized =
                prefix + String(repeating: "x", count: limit + 1 - prefix.utf8.count - suffix.utf8.count)
                + suffix
            #expect(oversized.utf8.count == limit + 1)
            try await alice.socket.sendText(oversized)
            #expect(try await alice.socket.waitForClose()?.rawValue == 1009)
        }
    }

    @Test func aClientThatSendsFasterThanItsAnswersIsClosed4004() async throws {
        try await MessagingFixture.run(environment: [
            "PARLEY_WS_MAX_MESSAGE_BYTES": "65536", "PARLEY_WS_PENDING_BYTES": "65536",
        ]) { fx in
            let device = try await GatewayTests.device(fx, username: "flood")
            // Requests of 20 KB each, sent without waiting for (or reading) any answer: the backlog passes 64 KiB
            // as soon as a few arrive while one is being answered.
            let padding = String(repeating: "x", count: 20_000)
            var sent = 0
            flooding: for index in 0..<300 {
                let type = index.isMultiple(of: 2) ? "sync" : "ping"
                do {
                    try await device.socket.sendText(
                        #"{"type":"\#(type)","reqId":"f\#(index)","data":{"pad":"\#(padding)"}}"#)
                    sent += 1
                } catch {
                    break flooding // closed by the server
                }
            }
            #expect(sent > 3)
            #expect(try await device.socket.waitForClose()?.rawValue == 4004)
        }
    }

    @Test func pastTheProbeLimitASilentSocketIsClosed4001AndLiveOnesStay() async throws {
        try await MessagingFixture.run(environment: [
            "PARLEY_WS_PROBE_SOCKETS_PER_SESSION": "2", "PARLEY_WS_PROBE_SECONDS": "3",
        ]) { fx in
            let session = try Session(try await fx.client.register(appKey: fx.appKey, username: "erin"))
            let connect = { (answersPings: Bool) in
                try await IMTestClient.connect(port: fx.live.port, token: session.imToken, answersPings: answersPings)
            }
            // Oldest first: a device gone without closing (it never answers a ping), then a live one.
            let silent = try await connect(false)
            let live = try await connect(true)
            // The third socket probes the session's oldest; the fourth, its two oldest.
            let third = try await connect(true)
            let fourth = try await connect(true)
            // The live one reads past both probes' deadlines, answering its probe's ping as any client that reads
            // does (this test client reads only when asked, and then answers pings).
            _ = try await live.collect("message", for: .seconds(4))
            #expect(try await silent.waitForClose()?.rawValue == 4001)
            #expect(silent.closeReason == "no answer to a liveness probe")
            for socket in [live, third, fourth] {
                #expect(try await socket.request("ping")["serverTime"] is String)
            }
            let frank = try await GatewayTests.device(fx, username: "frank")
            try await fx.sendOK(frank.session, to: session.userId, content: "all of you")
            for socket in [live, third, fourth] {
                #expect(
                    (try await socket.next("message")["data"] as? [String: Any])?["content"] as? String == "all of you")
            }
        }
    }

    @Test func aSessionPastItsSocketLimitLosesItsOldestSocketWith4502() async throws {
        try await MessagingFixture.run(environment: ["PARLEY_WS_MAX_SOCKETS_PER_SESSION": "2"]) { fx in
            let first = try await GatewayTests.device(fx, username: "carol")
            let token = first.session.imToken
            let second = try await IMTestClient.connect(port: fx.live.port, token: token)
            // Another device of the same user is another session: it does not count.
            let otherDevice = try await GatewayTests.device(fx, username: "carol", platform: "web", register: false)
            #expect(try await first.socket.request("ping")["serverTime"] is String)
            let third = try await IMTestClient.connect(port: fx.live.port, token: token)
            #expect(try await first.socket.waitForClose()?.rawValue == 4502)
            for socket in [second, third, otherDevice.socket] {
                #expect(try await socket.request("ping")["serverTime"] is String)
            }
            // The replaced socket no longer receives the session's events; the others do.
            let dave = try await GatewayTests.device(fx, username: "dave")
            try await fx.sendOK(dave.session, to: first.session.userId, content: "still there?")
            for socket in [second, third, otherDevice.socket] {
                #expect(
                    (try await socket.next("message")["data"] as? [String: Any])?["content"] as? String
                        == "still there?")
            }
        }
    }
}
