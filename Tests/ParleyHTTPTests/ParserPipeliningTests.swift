import ParleyHTTP
import Testing

/// Several requests per buffer, buffer bookkeeping, and handing bytes over after an upgrade.
@Suite struct ParserPipeliningTests {
    /// 100 requests, alternating GET, POST with Content-Length and POST chunked, each tagged with X-Seq.
    private func burst() -> (input: [UInt8], bodies: [Int: [UInt8]]) {
        var input: [UInt8] = []
        var bodies: [Int: [UInt8]] = [:]
        for seq in 0..<100 {
            switch seq % 3 {
            case 0:
                input += bytes("GET /items/\(seq)?page=\(seq) HTTP/1.1\r\nHost: h\r\nX-Seq: \(seq)\r\n\r\n")
            case 1:
                let body = bytes("{\"seq\":\(seq),\"pad\":\"" + String(repeating: "p", count: seq) + "\"}")
                bodies[seq] = body
                input += bytes(
                    "POST /items HTTP/1.1\r\nHost: h\r\nX-Seq: \(seq)\r\nContent-Length: \(body.count)\r\n\r\n")
                input += body
            default:
                let body = bytes(String(repeating: "c", count: seq))
                bodies[seq] = body
                input += bytes(
                    "POST /chunks HTTP/1.1\r\nHost: h\r\nX-Seq: \(seq)\r\nTransfer-Encoding: chunked\r\n\r\n")
                input += bytes(String(body.count / 2, radix: 16) + "\r\n") + body[..<(body.count / 2)] + bytes("\r\n")
                input += bytes(String(body.count - body.count / 2, radix: 16) + "\r\n") + body[(body.count / 2)...]
                input += bytes("\r\n0\r\n\r\n")
            }
        }
        return (input, bodies)
    }

    @Test func parsesBurstOfHundredPipelinedRequestsInOrder() throws {
        let (input, bodies) = burst()
        let outcome = parseUnderEverySplit(input)
        try #require(outcome.error == nil, "\(outcome)")
        #expect(outcome.heads.count == 100)
        #expect(outcome.endCount == 100)

        var seq = 0
        var expectingBodyFor: Int?
        for event in outcome.events {
            switch event {
            case .head(let head):
                #expect(expectingBodyFor == nil)
                #expect(head.headers["x-seq"] == String(seq))
                #expect(head.method == (seq % 3 == 0 ? .GET : .POST))
                if seq % 3 == 0 { #expect(head.query == "page=\(seq)") }
                expectingBodyFor = bodies[seq] == nil ? nil : seq
            case .body(let body):
                let owner = try #require(expectingBodyFor)
                #expect(body == bodies[owner])
                expectingBodyFor = nil
            case .end:
                #expect(expectingBodyFor == nil || bodies[seq]?.isEmpty == true)
                expectingBodyFor = nil
                seq += 1
            }
        }
        #expect(seq == 100)
    }

    @Test func parsesBurstFedThroughRawBufferPointers() throws {
        let (input, _) = burst()
        var parser = HTTPRequestParser()
        var ends = 0
        var offset = 0
        // Socket-sized reads that do not line up with request boundaries.
        while offset < input.count {
            let end = min(input.count, offset + 1500)
            input[offset..<end].withUnsafeBytes { parser.append($0) }
            offset = end
            while let event = try parser.next() {
                if event == .end { ends += 1 }
            }
        }
        #expect(ends == 100)
        #expect(parser.bufferedByteCount == 0)
    }

    @Test func handsOverBytesAfterUpgradeRequest() throws {
        let request = bytes(
            "GET /ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        // A masked WebSocket text frame that arrived in the same read, then more that is not HTTP at all.
        let frame: [UInt8] = [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58, 0x0D, 0x0A, 0x00]
        for cut in 1..<(request.count + frame.count) {
            let input = request + frame
            var parser = HTTPRequestParser()
            var events: [HTTPParserEvent] = []
            parser.append(contentsOf: input[..<cut])
            while let event = try parser.next() {
                events.append(event)
                if event == .end { break }
            }
            if events.last != .end {
                parser.append(contentsOf: input[cut...])
                while let event = try parser.next() {
                    events.append(event)
                    if event == .end { break }
                }
            } else {
                parser.append(contentsOf: input[cut...])
            }
            guard case .head(let head)? = events.first else {
                Issue.record("no head at cut \(cut)")
                return
            }
            #expect(head.isUpgrade)
            #expect(events.count == 2)
            #expect(parser.bufferedByteCount == frame.count, "cut \(cut)")
            #expect(parser.takeUnconsumedBytes() == frame, "cut \(cut)")
            #expect(parser.bufferedByteCount == 0)
            #expect(try parser.next() == nil)
        }
    }

    @Test func takeUnconsumedBytesResetsTheParser() throws {
        var parser = HTTPRequestParser()
        parser.append(contentsOf: bytes("GET / HTTP/1.1\r\nHost: h\r\n\r\nGET /next"))
        guard case .head? = try parser.next() else { throw Unexpected() }
        #expect(try parser.next() == .end)
        #expect(parser.takeUnconsumedBytes() == bytes("GET /next"))
        parser.append(contentsOf: bytes("GET /fresh HTTP/1.1\r\nHost: h\r\n\r\n"))
        guard case .head(let head)? = try parser.next() else { throw Unexpected() }
        #expect(head.path == "/fresh")
    }

    @Test func countsBufferedBytes() throws {
        var parser = HTTPRequestParser()
        #expect(parser.bufferedByteCount == 0)
        #expect(try parser.next() == nil)
        parser.append(contentsOf: bytes("GET / HTTP/1.1\r\nHost: h\r\n"))
        #expect(try parser.next() == nil)
        #expect(parser.bufferedByteCount == 25)
        parser.append(contentsOf: bytes("\r\nGET /2"))
        guard case .head? = try parser.next() else { throw Unexpected() }
        #expect(parser.bufferedByteCount == 6)
        #expect(try parser.next() == .end)
        #expect(try parser.next() == nil)
        #expect(parser.bufferedByteCount == 6)
    }

    /// Many requests through one parser, fed in pieces so that the consumed prefix is compacted often.
    @Test func staysCorrectAcrossBufferCompaction() throws {
        var parser = HTTPRequestParser()
        let body = bytes(String(repeating: "b", count: 3000))
        var heads = 0
        var received = 0
        for index in 0..<300 {
            var request = bytes("POST /\(index) HTTP/1.1\r\nHost: h\r\nContent-Length: \(body.count)\r\n\r\n") + body
            // Leave part of each request for the next append.
            let keep = index % 7 * 100
            parser.append(contentsOf: request[..<(request.count - keep)])
            request.removeFirst(request.count - keep)
            parser.append(contentsOf: request)
            while let event = try parser.next() {
                switch event {
                case .head(let head):
                    #expect(head.path == "/\(heads)")
                    heads += 1
                case .body(let bytes): received += bytes.count
                case .end: break
                }
            }
        }
        #expect(heads == 300)
        #expect(received == 300 * body.count)
    }

    /// Feeding a large head one byte at a time must stay linear: the scan resumes where it stopped.
    @Test(.timeLimit(.minutes(1))) func scansByteAtATimeInLinearTime() throws {
        let fields = (0..<400).map { "X-Field-\($0): \(String(repeating: "v", count: 30))\r\n" }.joined()
        let input = bytes("GET / HTTP/1.1\r\nHost: h\r\n\(fields)\r\n")
        var parser = HTTPRequestParser(limits: HTTPParserLimits(maxHeaderBytes: 64 * 1024))
        var heads = 0
        for _ in 0..<3 {
            for byte in input {
                parser.append(contentsOf: CollectionOfOne(byte))
                while let event = try parser.next() {
                    if case .head = event { heads += 1 }
                }
            }
        }
        #expect(heads == 3)
    }

    private struct Unexpected: Error {}
}
