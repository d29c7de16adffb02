import ParleyHTTP
import Testing

/// Header and body limits: 431 and 413 are decided as bytes arrive, never after buffering the excess.
@Suite struct ParserLimitTests {
    /// A head whose request line and header lines (with their CRLFs) are exactly `size` bytes.
    private func head(ofSize size: Int) -> String {
        let fixed = "GET / HTTP/1.1\r\nHost: h\r\nX-Pad: \r\n"
        return "GET / HTTP/1.1\r\nHost: h\r\nX-Pad: " + String(repeating: "p", count: size - fixed.utf8.count)
            + "\r\n\r\n"
    }

    @Test func acceptsHeadExactlyAtTheLimit() throws {
        let options = ParseOptions(limits: HTTPParserLimits(maxHeaderBytes: 100))
        _ = try parseValid(head(ofSize: 100), options: options)
        let over = parseUnderEverySplit(head(ofSize: 101), options: options)
        #expect(over.error == .headersTooLarge)
        #expect(over.events.isEmpty)
    }

    @Test func leadingEmptyLinesDoNotCountAgainstTheLimit() throws {
        let options = ParseOptions(limits: HTTPParserLimits(maxHeaderBytes: 100))
        _ = try parseValid(String(repeating: "\r\n", count: 80) + head(ofSize: 100), options: options)
    }

    @Test func rejectsManyHeadersWith431() {
        let fields = (0..<2000).map { "X-Field-\($0): value\r\n" }.joined()
        let outcome = parseUnderEverySplit("GET / HTTP/1.1\r\nHost: h\r\n\(fields)\r\n")
        #expect(outcome.error == .headersTooLarge)
    }

    @Test func rejectsLongRequestLineWith431() {
        let target = "/" + String(repeating: "a", count: 20 * 1024)
        #expect(failureStatus("GET \(target) HTTP/1.1\r\nHost: h\r\n\r\n") == 431)
    }

    /// A slow client sending one endless header line must be cut off once the limit is passed, without the
    /// parser waiting for (or buffering much beyond the limit before) the CRLFCRLF that never comes.
    @Test func rejectsSlowOversizedHeaderBeforeItEnds() {
        let limits = HTTPParserLimits()
        let input = bytes(
            "GET / HTTP/1.1\r\nHost: h\r\nX-Slow: " + String(repeating: "s", count: 20 * 1024) + "\r\n\r\n")
        var parser = HTTPRequestParser(limits: limits)
        var failedAt: Int?
        for (index, byte) in input.enumerated() {
            parser.append(contentsOf: [byte])
            do {
                #expect(try parser.next() == nil)
            } catch {
                #expect(error == .headersTooLarge)
                failedAt = index + 1
                break
            }
        }
        #expect(failedAt == limits.maxHeaderBytes + 2, "fails as soon as no head can fit")
        #expect((failedAt ?? .max) < input.count - 4, "before the end of the header section arrives")
        #expect(parser.bufferedByteCount <= limits.maxHeaderBytes + 2)
    }

    @Test func trailersShareTheHeaderBudget() throws {
        let options = ParseOptions(limits: HTTPParserLimits(maxHeaderBytes: 200))
        let start = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n"
        let headSize = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n".utf8.count
        let trailerFixed = "X-T: \r\n".utf8.count
        func trailer(_ size: Int) -> String {
            "X-T: " + String(repeating: "t", count: size - trailerFixed) + "\r\n\r\n"
        }

        _ = try parseValid(start + trailer(200 - headSize), options: options)
        let over = parseUnderEverySplit(start + trailer(201 - headSize), options: options)
        #expect(over.error == .headersTooLarge)
        #expect(over.bodies == [bytes("x")])
    }

    @Test func rejectsContentLengthOverLimitBeforeAnyBodyArrives() throws {
        var parser = HTTPRequestParser(limits: HTTPParserLimits(maxBodyBytes: 10))
        parser.append(contentsOf: bytes("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n"))
        let event = try parser.next()
        guard case .head(let head) = event else {
            Issue.record("expected the head first, got \(String(describing: event))")
            return
        }
        #expect(head.framing == .contentLength(11))
        // The driver may still raise the limit; the body is refused by the call that would start it.
        #expect(throws: HTTPParseError.bodyTooLarge) { try parser.next() }
        #expect(throws: HTTPParseError.bodyTooLarge) { try parser.next() }
    }

    @Test func acceptsContentLengthAtLimit() throws {
        let options = ParseOptions(limits: HTTPParserLimits(maxBodyBytes: 10))
        let outcome = try parseValid(
            "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n0123456789", options: options)
        #expect(outcome.bodies == [bytes("0123456789")])
        let over = parseUnderEverySplit(
            "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n0123456789A", options: options)
        #expect(over.error == .bodyTooLarge)
        #expect(over.events.map(\.kind) == ["head"])
    }

    @Test func rejectsChunkedBodyOverLimitOnceTotalExceedsIt() {
        let options = ParseOptions(limits: HTTPParserLimits(maxBodyBytes: 10))
        let outcome = parseUnderEverySplit(
            "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n4\r\nghij\r\n1\r\nk\r\n0\r\n\r\n",
            options: options)
        #expect(outcome.error == .bodyTooLarge)
        // The first ten bytes are within the limit; the chunk that would pass it is refused before its data.
        #expect(outcome.bodies == [bytes("abcdefghij")])
    }

    @Test func rejectsHugeChunkSizeWith413() {
        let options = ParseOptions(limits: HTTPParserLimits(maxBodyBytes: 1 << 20))
        let outcome = parseUnderEverySplit(
            "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\n", options: options)
        #expect(outcome.error == .bodyTooLarge)
    }

    @Test func setBodyLimitRaisesTheLimitForUploads() throws {
        let body = String(repeating: "u", count: 100)
        let small = ParseOptions(limits: HTTPParserLimits(maxBodyBytes: 10))
        let fixed = "POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\n\(body)"
        let chunked = "POST /upload HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n64\r\n\(body)\r\n0\r\n\r\n"
        #expect(failureStatus(fixed, options: small) == 413)
        #expect(failureStatus(chunked, options: small) == 413)

        var raised = small
        raised.bodyLimitAfterHead = 100
        #expect(try parseValid(fixed, options: raised).bodies == [bytes(body)])
        #expect(try parseValid(chunked, options: raised).bodies == [bytes(body)])
    }

    @Test func setBodyLimitCanLowerTheLimit() {
        var options = ParseOptions()
        options.bodyLimitAfterHead = 3
        #expect(failureStatus("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nabcd", options: options) == 413)
    }

    @Test func bodyLimitResetsForEachRequest() throws {
        var parser = HTTPRequestParser(limits: HTTPParserLimits(maxBodyBytes: 4))
        parser.append(contentsOf: bytes("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 8\r\n\r\n12345678"))
        parser.append(contentsOf: bytes("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 8\r\n\r\n12345678"))
        guard case .head? = try parser.next() else { throw ExpectedHead() }
        parser.setBodyLimit(8)
        #expect(try parser.next() == .body(bytes("12345678")))
        #expect(try parser.next() == .end)
        guard case .head? = try parser.next() else { throw ExpectedHead() }
        // The raised limit applied to the upload only; the next request is back to the default.
        #expect(throws: HTTPParseError.bodyTooLarge) { try parser.next() }
    }

    @Test func emitsBodyBytesAsTheyArrive() throws {
        var parser = HTTPRequestParser()
        parser.append(contentsOf: bytes("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc"))
        guard case .head? = try parser.next() else { throw ExpectedHead() }
        #expect(try parser.next() == .body(bytes("abc")))
        #expect(try parser.next() == nil)
        parser.append(contentsOf: bytes("defghijGET"))
        #expect(try parser.next() == .body(bytes("defghij")))
        #expect(try parser.next() == .end)
        #expect(try parser.next() == nil)
        #expect(parser.bufferedByteCount == 3)
    }

    @Test func rejectsOverlongChunkLine() {
        let outcome = parseUnderEverySplit(
            "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1;" + String(repeating: "e", count: 8000))
        #expect(outcome.error?.status == 400)
    }

    @Test func extremeLimitsDoNotTrap() throws {
        let unlimited = ParseOptions(limits: HTTPParserLimits(maxHeaderBytes: .max, maxBodyBytes: .max))
        let request = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\nX: y\r\n\r\n"
        #expect(try parseValid(request, options: unlimited).bodies == [bytes("ab")])

        let none = ParseOptions(limits: HTTPParserLimits(maxHeaderBytes: 0, maxBodyBytes: -1))
        #expect(failureStatus("GET / HTTP/1.1\r\nHost: h\r\n\r\n", options: none) == 431)
        var noBody = ParseOptions(limits: HTTPParserLimits(maxBodyBytes: -1))
        #expect(failureStatus(request, options: noBody) == 413)
        #expect(
            try parseValid("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", options: noBody).endCount == 1)
        noBody.bodyLimitAfterHead = .min
        #expect(failureStatus(request, options: noBody) == 413)
    }

    @Test func dropsBytesAfterFailure() {
        var parser = HTTPRequestParser()
        parser.append(contentsOf: bytes("GET / HTTP/9.9\r\nHost: h\r\n\r\n"))
        #expect(throws: HTTPParseError.versionNotSupported) { try parser.next() }
        let before = parser.bufferedByteCount
        parser.append(contentsOf: [UInt8](repeating: 0x41, count: 100_000))
        #expect(parser.bufferedByteCount == before)
        #expect(throws: HTTPParseError.versionNotSupported) { try parser.next() }
    }

    private struct ExpectedHead: Error {}
}
