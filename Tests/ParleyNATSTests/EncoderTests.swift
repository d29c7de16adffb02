import Foundation
import Testing

@testable import ParleyNATS

private func encoded(_ body: (inout [UInt8]) -> Void) -> String {
    var out: [UInt8] = []
    body(&out)
    return String(decoding: out, as: UTF8.self)
}

/// CONNECT's JSON object, decoded with Foundation (an independent reader).
private func connectObject(_ options: NATSConnectOptions) throws -> [String: Any] {
    let line = encoded { NATSEncoder.connect(options, into: &$0) }
    #expect(line.hasPrefix("CONNECT {"))
    #expect(line.hasSuffix("}\r\n"))
    let body = Array(line.utf8.dropLast(2)) // CRLF
    #expect(!body.contains(0x0D) && !body.contains(0x0A), "a raw line break inside CONNECT")
    let json = body.dropFirst("CONNECT ".utf8.count)
    return try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any])
}

@Suite struct EncoderTests {
    @Test func writesPublishesWithTheirByteCount() {
        let plain = encoded { NATSEncoder.publish(subject: "a.b", payload: Array("hi".utf8), into: &$0) }
        #expect(plain == "PUB a.b 2\r\nhi\r\n")
        let withReply = encoded { NATSEncoder.publish(subject: "a", replyTo: "_INBOX.1", payload: [], into: &$0) }
        #expect(withReply == "PUB a _INBOX.1 0\r\n\r\n")
        // The size counts bytes, not characters.
        let accented = encoded { NATSEncoder.publish(subject: "a", payload: Array("héllo".utf8), into: &$0) }
        #expect(accented == "PUB a 6\r\nhéllo\r\n")
    }

    @Test func predictsThePublishSizeExactly() {
        for (subject, reply, count) in [("a", nil, 0), ("a.b.c", "r", 9), ("x", "reply.to", 10), ("s", nil, 1_048_576)]
        {
            var out: [UInt8] = []
            NATSEncoder.publish(
                subject: subject, replyTo: reply, payload: [UInt8](repeating: 7, count: count), into: &out)
            #expect(NATSEncoder.publishSize(subject: subject, replyTo: reply, payloadCount: count) == out.count)
        }
    }

    @Test func writesSubscriptionOperations() {
        let sid = NATSSubscriptionID(17)
        let lines = [
            encoded { NATSEncoder.subscribe(subject: "a.*", queue: nil, sid: sid, into: &$0) },
            encoded { NATSEncoder.subscribe(subject: "a.>", queue: "workers", sid: sid, into: &$0) },
            encoded { NATSEncoder.unsubscribe(sid: sid, into: &$0) },
            encoded { NATSEncoder.unsubscribe(sid: sid, max: 5, into: &$0) },
            encoded { NATSEncoder.unsubscribe(sid: NATSSubscriptionID(0), max: 0, into: &$0) },
            encoded { NATSEncoder.ping(into: &$0) },
            encoded { NATSEncoder.pong(into: &$0) },
        ]
        #expect(
            lines == [
                "SUB a.* 17\r\n", "SUB a.> workers 17\r\n", "UNSUB 17\r\n", "UNSUB 17 5\r\n", "UNSUB 0 0\r\n",
                "PING\r\n", "PONG\r\n",
            ])
    }

    @Test func writesCONNECTWithVerboseAndPedanticOffAndProtocol1() throws {
        let object = try connectObject(NATSConnectOptions(name: "parley-1"))
        #expect(object["verbose"] as? Bool == false)
        #expect(object["pedantic"] as? Bool == false)
        #expect(object["name"] as? String == "parley-1")
        #expect(object["lang"] as? String == "swift")
        #expect(object["version"] as? String == NATSConnectOptions.clientVersion)
        #expect(object["protocol"] as? Int == 1)
        #expect(object["echo"] as? Bool == true)
        #expect(object["headers"] as? Bool == false)
        #expect(object["user"] == nil && object["pass"] == nil && object["auth_token"] == nil)
    }

    @Test func writesCredentialsAndOptionsFromTheServerURL() throws {
        var configuration = NATSConfiguration(servers: [])
        configuration.echo = false
        configuration.headers = true
        let withPassword = try connectObject(
            NATSConnectOptions(
                configuration: configuration, server: NATSServerURL(host: "h", user: "alice", password: "s3cret")))
        #expect(withPassword["user"] as? String == "alice")
        #expect(withPassword["pass"] as? String == "s3cret")
        #expect(withPassword["echo"] as? Bool == false)
        #expect(withPassword["headers"] as? Bool == true)
        let withToken = try connectObject(
            NATSConnectOptions(configuration: configuration, server: NATSServerURL(host: "h", token: "t0k")))
        #expect(withToken["auth_token"] as? String == "t0k")
        #expect(withToken["user"] == nil)
    }

    @Test func escapesQuotesBackslashesAndControlCharactersInCONNECT() throws {
        var options = NATSConnectOptions(name: "a\"b\\c\r\nPUB x 1\u{1}")
        options.password = "p\"w"
        options.user = "ü"
        let object = try connectObject(options)
        #expect(object["name"] as? String == "a\"b\\c\r\nPUB x 1\u{1}")
        #expect(object["pass"] as? String == "p\"w")
        #expect(object["user"] as? String == "ü")
    }

    @Test(arguments: ["a", "a.b.c", "_INBOX.abc123", "parley.user.42", "ü.é", "a-b_c.$SYS"])
    func acceptsValidPublishSubjects(subject: String) throws {
        try NATSSubject.validatePublish(subject)
        try NATSSubject.validateSubscribe(subject)
    }

    @Test(arguments: ["", " a", "a b", "a\tb", "a\r\nPUB x 1", "a..b", ".a", "a.", ".", "a\u{7F}", "a\u{0}"])
    func refusesSubjectsThatCouldBreakTheLine(subject: String) {
        #expect(throws: NATSError.self) { try NATSSubject.validatePublish(subject) }
        #expect(throws: NATSError.self) { try NATSSubject.validateSubscribe(subject) }
    }

    @Test(arguments: ["a.*", "*", ">", "a.>", "*.b.>", "a.*.c"])
    func allowsWildcardsInSubscriptionsOnly(subject: String) throws {
        try NATSSubject.validateSubscribe(subject)
        #expect(throws: NATSError.invalidSubject("wildcards are for subscriptions only")) {
            try NATSSubject.validatePublish(subject)
        }
    }

    @Test(arguments: ["a.>.b", "a*", "a.b*", "*a", ">x", "a.>>", "> ", ">.a"])
    func refusesWildcardsThatAreNotWholeTokensOrNotLast(subject: String) {
        #expect(throws: NATSError.self) { try NATSSubject.validateSubscribe(subject) }
    }

    @Test func refusesQueueGroupsWithSpacesOrNothing() throws {
        try NATSSubject.validateQueueGroup("workers.1")
        #expect(throws: NATSError.invalidQueueGroup("empty")) { try NATSSubject.validateQueueGroup("") }
        #expect(throws: NATSError.self) { try NATSSubject.validateQueueGroup("a b") }
        #expect(throws: NATSError.self) { try NATSSubject.validateQueueGroup("a\r\n") }
    }
}
