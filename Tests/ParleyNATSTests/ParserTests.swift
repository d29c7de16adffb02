import ParleyTestSupport
import Testing

@testable import ParleyNATS

/// What a parser made of an input: the operations in order, then the error that stopped it, if any.
struct ParseOutcome: Equatable, CustomStringConvertible {
    var operations: [NATSServerOperation]
    var error: NATSProtocolError?
    var leftover: Int

    var description: String { "\(operations.count) operations, error \(String(describing: error)), \(leftover) left" }
}

func parse(_ input: [UInt8], cuts: [Int] = [], parser: NATSParser = NATSParser()) -> ParseOutcome {
    var parser = parser
    var operations: [NATSServerOperation] = []
    for chunk in DecoderVerifier.chunks(of: input, cuts: cuts) {
        parser.append(contentsOf: chunk)
        while true {
            do {
                guard let operation = try parser.next() else { break }
                operations.append(operation)
            } catch {
                return ParseOutcome(operations: operations, error: error, leftover: parser.bufferedByteCount)
            }
        }
    }
    return ParseOutcome(operations: operations, error: nil, leftover: parser.bufferedByteCount)
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// The INFO nats-server 2.9.10 sent here (with its trailing space before CRLF).
let realInfoLine =
    #"INFO {"server_id":"ND4ZZNOBFCKNYOJG","server_name":"ND4ZZNOBFCKNYOJG","version":"2.9.10","proto":1,"#
    + #""go":"go1.19.8","host":"127.0.0.1","port":24222,"headers":true,"auth_required":true,"#
    + #""max_payload":1048576,"client_id":4,"client_ip":"127.0.0.1"} "# + "\r\n"

private func message(
    _ subject: String, _ sid: UInt64, reply: String? = nil, headers: NATSHeaders? = nil, _ payload: [UInt8]
) -> NATSServerOperation {
    .message(
        NATSMessage(
            subject: subject, subscription: NATSSubscriptionID(sid), replyTo: reply, headers: headers,
            payload: payload))
}

private func pseudoRandomPayload(_ count: Int, seed: UInt64) -> [UInt8] {
    var random = SplitMix64(seed: seed)
    return (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
}

@Suite struct ParserTests {
    @Test func readsTheINFOOfARealServer() throws {
        let outcome = parse(bytes(realInfoLine))
        #expect(outcome.error == nil)
        guard case .info(let info) = outcome.operations.first else {
            Issue.record("no INFO: \(outcome)")
            return
        }
        #expect(info.serverID == "ND4ZZNOBFCKNYOJG")
        #expect(info.version == "2.9.10")
        #expect(info.proto == 1)
        #expect(info.headers == true)
        #expect(info.authRequired == true)
        #expect(info.maxPayload == 1_048_576)
        #expect(info.tlsRequired == nil)
    }

    @Test func parsesEveryOperationTheSameUnderEverySplit() {
        let headerBlock = "NATS/1.0\r\nTrace-Id: abc\r\nTrace-Id:  def \r\n\r\n"
        let headered = headerBlock + "hello"
        var stream = bytes(realInfoLine)
        stream += bytes("MSG foo.bar 1 5\r\nhello\r\n")
        stream += bytes("MSG foo 22 reply.to 0\r\n\r\n")
        stream += bytes("msg  foo\t9   3\r\nabc\r\n")
        stream += bytes("HMSG foo 3 \(headerBlock.utf8.count) \(headered.utf8.count)\r\n\(headered)\r\n")
        stream += bytes("hmsg foo 3 _INBOX.r 16 16\r\nNATS/1.0 503\r\n\r\n\r\n")
        stream += bytes("PING\r\npong\r\n+OK\r\n-ERR 'Authorization Violation'\r\nPiNg\n")
        stream += bytes("MSG bin 4 10\r\n") + bytes("\r\nMSG x\r") + [0, 255] + bytes("\r\n")
        let outcome = DecoderVerifier.verify(stream) { cuts in parse(stream, cuts: cuts) }
        #expect(outcome.error == nil)
        #expect(outcome.leftover == 0)
        #expect(outcome.operations.count == 12)
        let expectedHeaders = NATSHeaders(fields: [
            NATSHeaders.Field(name: "Trace-Id", value: "abc"), NATSHeaders.Field(name: "Trace-Id", value: "def"),
        ])
        #expect(
            Array(outcome.operations.dropFirst()) == [
                message("foo.bar", 1, bytes("hello")),
                message("foo", 22, reply: "reply.to", []),
                message("foo", 9, bytes("abc")),
                message("foo", 3, headers: expectedHeaders, bytes("hello")),
                message("foo", 3, reply: "_INBOX.r", headers: NATSHeaders(status: 503), []),
                .ping, .pong, .ok,
                .error(NATSServerError(message: "Authorization Violation")),
                .ping,
                message("bin", 4, bytes("\r\nMSG x\r") + [0, 255]),
            ])
    }

    @Test func parsesManySmallMessagesInOneRead() {
        var stream: [UInt8] = []
        for index in 0..<10_000 { stream += bytes("MSG s.\(index % 7) 1 \(String(index).utf8.count)\r\n\(index)\r\n") }
        let outcome = parse(stream)
        #expect(outcome.error == nil)
        #expect(outcome.operations.count == 10_000)
        #expect(outcome.operations.last == message("s.\(9999 % 7)", 1, bytes("9999")))
    }

    @Test func parsesALargePayloadUnderSplitsAcrossTheCompactionThreshold() {
        let payload = pseudoRandomPayload(70_000, seed: 7)
        let stream = bytes("PING\r\nMSG big 1 \(payload.count)\r\n") + payload + bytes("\r\nPONG\r\n")
        let outcome = DecoderVerifier.verify(stream, exhaustiveLimit: 64) { cuts in parse(stream, cuts: cuts) }
        #expect(outcome.operations == [.ping, message("big", 1, payload), .pong])
    }

    @Test func refusesAControlLineOverTheLimitWithoutWaitingForItsEnd() {
        let stream = bytes("MSG ") + [UInt8](repeating: UInt8(ascii: "a"), count: 5000)
        let outcome = parse(stream, parser: NATSParser(maxControlLineBytes: 4096))
        #expect(outcome.error == .controlLineTooLong(limit: 4096))
        let whole = DecoderVerifier.verify(stream + bytes(" 1 0\r\n\r\n")) { cuts in
            parse(stream + bytes(" 1 0\r\n\r\n"), cuts: cuts)
        }
        #expect(whole.error == .controlLineTooLong(limit: 4096))
    }

    @Test func allowsINFOALongerLineThanOtherOperations() {
        let urls = (0..<200).map { "\"nats://10.0.\($0 / 250).\($0 % 250):4222\"" }.joined(separator: ",")
        let line = bytes("INFO {\"server_id\":\"x\",\"connect_urls\":[\(urls)]}\r\n")
        #expect(line.count > 4096)
        let outcome = parse(line, parser: NATSParser(maxControlLineBytes: 4096, maxInfoBytes: 64 * 1024))
        #expect(outcome.error == nil)
        guard case .info(let info) = outcome.operations.first else {
            Issue.record("no INFO")
            return
        }
        #expect(info.connectURLs?.count == 200)
        #expect(parse(line, parser: NATSParser(maxInfoBytes: 4096)).error == .controlLineTooLong(limit: 4096))
    }

    @Test func refusesAMessageOverMaxPayloadFromItsControlLineAlone() {
        let outcome = parse(bytes("MSG a 1 1048577\r\n"))
        #expect(outcome.error == .payloadTooLarge(size: 1_048_577, limit: 1 << 20))
        #expect(parse(bytes("MSG a 1 99999999999999999999\r\n")).error != nil)
    }

    @Test func followsMaxPayloadFromTheLatestINFO() {
        let info = bytes(#"INFO {"server_id":"s","max_payload":100}"# + "\r\n")
        let fits = info + bytes("MSG a 1 100\r\n") + [UInt8](repeating: 1, count: 100) + bytes("\r\n")
        #expect(parse(fits).error == nil)
        #expect(parse(info + bytes("MSG a 1 101\r\n")).error == .payloadTooLarge(size: 101, limit: 100))
        let headered = info + bytes("HMSG a 1 12 101\r\n")
        #expect(parse(headered).error == .payloadTooLarge(size: 101, limit: 100))
    }

    @Test func capsMaxPayloadAtTheClientCeiling() {
        let info = bytes(#"INFO {"server_id":"s","max_payload":1000000000}"# + "\r\n")
        let parser = NATSParser(maxPayloadCeiling: 4096)
        #expect(
            parse(info + bytes("MSG a 1 4097\r\n"), parser: parser).error == .payloadTooLarge(size: 4097, limit: 4096))
    }

    @Test func refusesAPayloadNotFollowedByCRLF() {
        #expect(parse(bytes("MSG a 1 3\r\nabcd\r\n")).error == .missingPayloadTerminator)
        #expect(parse(bytes("MSG a 1 3\r\nabc\n\r")).error == .missingPayloadTerminator)
    }

    @Test func refusesUnknownOperationsShowingOnlyPrintableBytes() {
        #expect(parse(bytes("FOO bar\r\n")).error == .unknownOperation("FOO"))
        #expect(parse(bytes("PUB a 1\r\nx\r\n")).error == .unknownOperation("PUB"))
        #expect(parse([0x01, 0xFF, 0x41, 0x0D, 0x0A]).error == .unknownOperation("??A"))
        #expect(parse(bytes("\r\n")).error == .unknownOperation(""))
        #expect(parse(bytes("PINGPONG\r\n")).error == .unknownOperation("PINGPONG"))
    }

    @Test(arguments: [
        "MSG a 1\r\n", "MSG a\r\n", "MSG\r\n", "MSG a 1 b c 3\r\n", "MSG a x 3\r\n", "MSG a 1 -3\r\n", "MSG a 1 3x\r\n",
        "MSG a 1 +3\r\n", "HMSG a 1 3\r\n", "HMSG a 1 5 4\r\n", "HMSG a 1 r x 4\r\n", "HMSG a 1 r s 2 4\r\n",
    ])
    func refusesMalformedMessageLines(line: String) {
        guard case .malformed = parse(bytes(line)).error else {
            Issue.record("\(line.debugDescription) was not refused as malformed")
            return
        }
    }

    @Test(arguments: [
        "HTTP/1.1\r\n\r\n", "NATS/1.0\r\nA: b\r\n", "NATS/1.0\r\nno colon\r\n\r\n", "NATS/1.0\r\n: v\r\n\r\n",
        "NATS/1.0 5x3\r\n\r\n", "NATS/1.0x\r\n\r\n", "NATS/1.0\nA: b\r\n\r\n", "NATS/1.0\r\nA b: c\r\n\r\n",
    ])
    func refusesMalformedHeaderBlocks(block: String) {
        let line = "HMSG a 1 \(block.utf8.count) \(block.utf8.count)\r\n\(block)\r\n"
        guard case .malformedHeaders = parse(bytes(line)).error else {
            Issue.record("\(block.debugDescription) was not refused")
            return
        }
    }

    @Test func readsAnInlineStatusWithItsDescription() throws {
        let block = "NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 3\r\n\r\n"
        let outcome = parse(bytes("HMSG a 1 \(block.utf8.count) \(block.utf8.count)\r\n\(block)\r\n"))
        guard case .message(let message) = outcome.operations.first, let headers = message.headers else {
            Issue.record("no headered message: \(outcome)")
            return
        }
        #expect(headers.status == 408)
        #expect(headers.statusDescription == "Request Timeout")
        #expect(headers.values(for: "nats-pending-messages") == ["3"])
    }

    @Test(arguments: [
        "INFO\r\n", "INFO {\r\n", "INFO []\r\n", #"INFO {"server_id":5}"# + "\r\n", #"INFO {"max_payload":1}"# + "\r\n",
    ])
    func refusesAnUnreadableINFO(line: String) {
        guard case .invalidInfo = parse(bytes(line)).error else {
            Issue.record("\(line.debugDescription) was not refused")
            return
        }
    }

    @Test func staysFailedAfterAnError() {
        var parser = NATSParser()
        parser.append(contentsOf: bytes("BAD\r\n"))
        #expect(throws: NATSProtocolError.unknownOperation("BAD")) { try parser.next() }
        parser.append(contentsOf: bytes("PING\r\n"))
        #expect(throws: NATSProtocolError.unknownOperation("BAD")) { try parser.next() }
        #expect(parser.bufferedByteCount == 0)
    }

    @Test func survivesRandomBytesWithoutCrashing() {
        var random = SplitMix64(seed: 23)
        let alphabet = bytes("MSG HMSG PING PONG INFO -ERR +OK {}\"': 0123456789\r\n\t.") + [0, 0xFF]
        for _ in 0..<2000 {
            let count = Int.random(in: 0..<200, using: &random)
            let input = (0..<count).map { _ in alphabet.randomElement(using: &random)! }
            _ = parse(input)
        }
    }

    @Test func classifiesServerErrors() {
        let cases: [(String, NATSServerError.Kind, Bool)] = [
            ("Authorization Violation", .authorizationViolation, true),
            ("User Authentication Expired", .authorizationViolation, true),
            ("Authorization Timeout", .authorizationTimeout, true),
            ("Stale Connection", .staleConnection, true),
            ("Maximum Payload Violation", .maxPayloadViolation, true),
            ("Maximum Connections Exceeded", .maxConnectionsExceeded, true),
            ("Slow Consumer", .slowConsumer, true),
            ("Secure Connection - TLS Required", .tlsRequired, true),
            ("Permissions Violation for Publish to \"a\"", .permissionsViolation, false),
            ("Permissions Violation for Subscription to \"a\"", .permissionsViolation, false),
            ("Invalid Subject", .invalidSubject, false),
            ("Invalid Publish Subject", .invalidSubject, false),
            ("Maximum Subscriptions Exceeded", .maxSubscriptionsExceeded, false),
            ("Unknown Protocol Operation", .other, true),
        ]
        for (text, kind, closes) in cases {
            let error = NATSServerError(message: text)
            #expect(error.kind == kind, "\(text)")
            #expect(error.closesConnection == closes, "\(text)")
        }
        #expect(
            parse(bytes("-ERR   'Stale Connection'  \r\n")).operations == [
                .error(NATSServerError(message: "Stale Connection"))
            ])
        #expect(
            parse(bytes("-ERR unquoted text\r\n")).operations == [.error(NATSServerError(message: "unquoted text"))])
    }
}
