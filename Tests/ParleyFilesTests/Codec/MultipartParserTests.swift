import ParleyFiles
import ParleyTestSupport
import Testing

@Suite("MultipartParser: valid bodies under every split")
struct MultipartParserTests {
    let boundary = "XyZ"

    @Test func parsesAFieldAndAFile() throws {
        let body = bytes(
            "--XyZ\r\nContent-Disposition: form-data; name=\"caption\"\r\n\r\nhello\r\n"
                + "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n"
                + "Content-Type: text/plain\r\n\r\nline 1\r\nline 2\r\n--XyZ--\r\n")
        let outcome = parseMultipartUnderEverySplit(body, boundary: boundary)
        try #require(outcome.error == nil, "\(outcome)")
        #expect(
            outcome.events == [
                .partBegin(
                    MultipartPartHead(
                        name: "caption", filename: nil, contentType: nil,
                        headers: [.init(name: "Content-Disposition", value: "form-data; name=\"caption\"")])),
                .partData(bytes("hello")),
                .partEnd,
                .partBegin(
                    MultipartPartHead(
                        name: "file", filename: "a.txt", contentType: "text/plain",
                        headers: [
                            .init(name: "Content-Disposition", value: "form-data; name=\"file\"; filename=\"a.txt\""),
                            .init(name: "Content-Type", value: "text/plain"),
                        ])),
                .partData(bytes("line 1\r\nline 2")),
                .partEnd,
                .end,
            ])
    }

    @Test func parsesABrowserBodyWithPreambleAndEpilogue() throws {
        let webkit = "----WebKitFormBoundary7MA4YWxkTrZu0gW"
        let body = bytes(
            "This is the preamble. It is to be ignored.\r\n--\(webkit.dropLast())\r\n-- \(webkit)\r\n"
                + "--\(webkit)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"photo.jpg\"\r\n"
                + "Content-Type: image/jpeg\r\n\r\n\u{1}\u{2}\u{3}\r\n--\(webkit)--\r\n"
                + "This is the epilogue.\r\n--\(webkit)\r\n"
        )
        // The preamble here holds things that look like delimiters but are not at a line start.
        let prefixed = bytes("x--\(webkit)\r\n") + body
        for input in [body, prefixed] {
            let outcome = parseMultipartUnderEverySplit(input, boundary: webkit)
            try #require(outcome.error == nil, "\(outcome)")
            #expect(outcome.heads.map(\.filename) == ["photo.jpg"])
            #expect(outcome.heads.first?.header("content-type") == "image/jpeg")
            #expect(outcome.bodies == [[1, 2, 3]])
            #expect(outcome.events.last == .end)
        }
    }

    @Test func bodyMayStartWithoutPreambleOrEndWithoutCRLF() throws {
        let outcome = parseMultipartUnderEverySplit(
            bytes("--XyZ\r\n\(formData("a"))\r\n\r\n1\r\n--XyZ--"), boundary: boundary)
        try #require(outcome.error == nil, "\(outcome)")
        #expect(outcome.bodies == [bytes("1")])
    }

    @Test func acceptsABodyWithNoParts() throws {
        // What a browser sends for an empty FormData.
        let outcome = parseMultipartUnderEverySplit(bytes("--XyZ--\r\n"), boundary: boundary)
        #expect(outcome.events == [.end])
        #expect(outcome.error == nil)
    }

    @Test func emptyBodiesInBothForms() throws {
        // Browsers send an empty file as headers, the empty line, then the delimiter's own CRLF; RFC 2046 also
        // allows a part with no CRLF after its headers at all (`body-part := MIME-part-headers [CRLF *OCTET]`).
        let withEmptyLine = bytes("--XyZ\r\n\(formData("a"))\r\n\r\n\r\n--XyZ\r\n\(formData("b"))\r\n\r\n--XyZ--")
        let outcome = parseMultipartUnderEverySplit(withEmptyLine, boundary: boundary)
        try #require(outcome.error == nil, "\(outcome)")
        #expect(outcome.heads.map(\.name) == ["a", "b"])
        #expect(outcome.bodies == [[], []])
        #expect(!outcome.events.contains { if case .partData = $0 { true } else { false } })
    }

    @Test func bodyOpeningWithTheBoundaryLineIsAnEmptyPart() throws {
        // After the header section, `--XyZ` ends the part: the header section's last CRLF doubles as the
        // delimiter's. A body that opens with a near miss keeps every byte.
        let body = bytes("--XyZ\r\n\(formData("a"))\r\n\r\n--XyZ\r\n\(formData("b"))\r\n\r\n--XyQ\r\n--XyZ--")
        let outcome = parseMultipartUnderEverySplit(body, boundary: boundary)
        try #require(outcome.error == nil, "\(outcome)")
        #expect(outcome.bodies == [[], bytes("--XyQ")])
    }

    @Test func allowsTransportPaddingAfterDelimiters() throws {
        let body = bytes(
            "--XyZ \t \r\n\(formData("a"))\r\n\r\nv\r\n--XyZ\t\r\n\(formData("b"))\r\n\r\nw\r\n--XyZ-- \r\n")
        let outcome = parseMultipartUnderEverySplit(body, boundary: boundary)
        try #require(outcome.error == nil, "\(outcome)")
        #expect(outcome.bodies == [bytes("v"), bytes("w")])
    }

    static let nearBoundaryBodies: [String] = [
        "\r\n", "\r", "\n", "\r\n-", "\r\n--", "\r\n--X", "\r\n--Xy", "\r\n--XY", "\r\n--xyZ",
        "x --XyZ in the middle", "a--XyZ", "\n--XyZ", "\r--XyZ", "\r\r\n--Xy", "\r\n\r\n--Xy\r\n",
        "\r\n-\r\n--\r\n--X\r\n--Xy", "x--XyZ--", "text\r\n--XyQ--", "ends with CR\r", "ends with partial\r\n--Xy",
        "-", "--", "\r\n\r\n", "\r\r\r\r", "\r\n--Xy\r\n--Xy\r\n--Xy",
    ]

    @Test(arguments: nearBoundaryBodies)
    func keepsNearBoundarySequencesInTheBody(_ text: String) throws {
        let body = multipartBody(
            boundary: boundary, parts: [([formData("f")], bytes(text)), ([formData("g")], bytes(text + text))])
        let outcome = parseMultipartUnderEverySplit(body, boundary: boundary)
        try #require(outcome.error == nil, "\(outcome)")
        #expect(outcome.bodies == [bytes(text), bytes(text + text)])
    }

    @Test func passesEveryByteValueThrough() throws {
        var payload: [UInt8] = []
        for round in 0..<3 {
            payload += (0...255).map { UInt8($0) }
            payload += bytes("\r\n--XyZZ\r\n-\r\r\n\n--Xy") + [UInt8(round)]
        }
        let body = multipartBody(
            boundary: boundary,
            parts: [([formData("bin", filename: "all.bin"), "Content-Type: application/octet-stream"], payload)])
        let outcome = parseMultipartUnderEverySplit(body, boundary: boundary)
        // "\r\n--XyZZ" starts with the delimiter: the boundary inside a part is malformed (RFC 2046 §5.1.1).
        #expect(outcome.error == .malformed("unexpected bytes after boundary"))
        let clean = payload.replacing(bytes("--XyZZ"), with: bytes("--XZZ"))
        let cleanBody = multipartBody(
            boundary: boundary,
            parts: [([formData("bin", filename: "all.bin"), "Content-Type: application/octet-stream"], clean)])
        let cleanOutcome = parseMultipartUnderEverySplit(cleanBody, boundary: boundary)
        try #require(cleanOutcome.error == nil, "\(cleanOutcome)")
        #expect(cleanOutcome.bodies == [clean])
        #expect(cleanOutcome.heads.first?.contentType == "application/octet-stream")
    }

    @Test func boundaryWithSpacesAndPunctuation() throws {
        let odd = "a'()+_,-./:=? b"
        let body = multipartBody(boundary: odd, parts: [([formData("x")], bytes("--a'()+_,-./:=? \r\n"))])
        let outcome = parseMultipartUnderEverySplit(body, boundary: odd)
        try #require(outcome.error == nil, "\(outcome)")
        #expect(outcome.bodies == [bytes("--a'()+_,-./:=? \r\n")])
    }

    @Test func streamsALargePartHoldingBackAtMostTheDelimiter() throws {
        let boundary = "----------------------------8c1b2f0e2a7d4b1f"
        var rng = SplitMix64(seed: 42)
        var payload = (0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        // Seed the payload with many near misses so that partial matches span chunk edges.
        for offset in stride(from: 1000, to: payload.count - 100, by: 4099) {
            payload.replaceSubrange(offset..<(offset + 20), with: bytes("\r\n--" + boundary.prefix(16)))
        }
        let body = multipartBody(
            boundary: boundary, parts: [([formData("file", filename: "big.bin")], payload)])
        let delimiterLength = 4 + boundary.utf8.count
        for chunkSize in [1, 7, 1000, 4096, 65536] {
            var parser = MultipartParser(boundary: boundary)
            var received: [UInt8] = []
            received.reserveCapacity(payload.count)
            var events = 0
            var inBody = false
            for start in stride(from: 0, to: body.count, by: chunkSize) {
                for event in try parser.feed(body[start..<min(start + chunkSize, body.count)]) {
                    events += 1
                    switch event {
                    case .partBegin: inBody = true
                    case .partData(let data): received += data
                    case .partEnd: inBody = false
                    case .end: break
                    }
                }
                if inBody { #expect(parser.bufferedByteCount < delimiterLength, "chunk size \(chunkSize)") }
                #expect(parser.bufferedByteCount <= 200, "chunk size \(chunkSize)")
            }
            try parser.finish()
            #expect(parser.isComplete)
            #expect(received == payload, "chunk size \(chunkSize)")
            // Data is passed on with every feed, not collected until the part ends.
            if chunkSize <= 4096 { #expect(events > payload.count / chunkSize / 2) }
        }
    }

    @Test func feedsFromARawBuffer() throws {
        let body = multipartBody(boundary: boundary, parts: [([formData("a")], bytes("raw"))])
        var parser = MultipartParser(boundary: boundary)
        let events = try body.withUnsafeBytes { try parser.feed($0) }
        try parser.finish()
        #expect(events.count == 4)
        #expect(events[1] == .partData(bytes("raw")))
    }

    @Test func ignoresBytesAfterTheCloseDelimiter() throws {
        var parser = MultipartParser(boundary: boundary)
        _ = try parser.feed(multipartBody(boundary: boundary, parts: [([formData("a")], bytes("1"))]))
        #expect(parser.isComplete)
        #expect(try parser.feed(bytes("--XyZ\r\ngarbage without rules\r\n\0")).isEmpty)
        try parser.finish()
    }
}

extension Array where Element == UInt8 {
    /// This array with every occurrence of `target` replaced.
    func replacing(_ target: [UInt8], with replacement: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        var index = 0
        while index < count {
            if index + target.count <= count, Array(self[index..<(index + target.count)]) == target {
                result += replacement
                index += target.count
            } else {
                result.append(self[index])
                index += 1
            }
        }
        return result
    }
}
