import ParleyFiles
import Testing

/// One malformed body and the error it must fail with, whichever way it is split.
struct MalformedMultipart: Sendable, CustomTestStringConvertible {
    var name: String
    var input: [UInt8]
    var error: MultipartError

    init(_ name: String, _ text: String, _ error: MultipartError) {
        self.name = name
        self.input = bytes(text)
        self.error = error
    }

    var testDescription: String { name }
}

private let disposition = "Content-Disposition: form-data; name=\"a\"\r\n"

let malformedMultipartCorpus: [MalformedMultipart] = [
    // Framing (RFC 2046 §5.1.1).
    .init("empty input", "", .unexpectedEnd),
    .init("preamble only", "no boundary here\r\n--XyQ\r\n", .unexpectedEnd),
    .init("ends inside a part", "--XyZ\r\n\(disposition)\r\nhalf a body", .unexpectedEnd),
    .init("ends inside headers", "--XyZ\r\nContent-Disposition: form", .unexpectedEnd),
    .init("ends after a delimiter", "--XyZ\r\n\(disposition)\r\nv\r\n--XyZ", .unexpectedEnd),
    .init("ends after one dash", "--XyZ\r\n\(disposition)\r\nv\r\n--XyZ-", .unexpectedEnd),
    .init("ends with a partial delimiter", "--XyZ\r\n\(disposition)\r\nv\r\n--Xy", .unexpectedEnd),
    .init("no CRLF after boundary", "--XyZ\r\(disposition)\r\nv\r\n--XyZ--", .malformed("missing CRLF after boundary")),
    .init("bare LF after boundary", "--XyZ\n\(disposition)\r\nv\r\n--XyZ--", .malformed("missing CRLF after boundary")),
    .init("bare LF after padding", "--XyZ \n\(disposition)\r\nv\r\n--XyZ--", .malformed("missing CRLF after boundary")),
    .init(
        "text after boundary", "--XyZx\r\n\(disposition)\r\nv\r\n--XyZ--", .malformed("unexpected bytes after boundary")
    ),
    .init(
        "text after padding", "--XyZ x\r\n\(disposition)\r\nv\r\n--XyZ--", .malformed("unexpected bytes after boundary")
    ),
    .init(
        "longer boundary inside a part", "--XyZ\r\n\(disposition)\r\nv\r\n--XyZW\r\n--XyZ--",
        .malformed("unexpected bytes after boundary")),
    .init("single dash close", "--XyZ\r\n\(disposition)\r\nv\r\n--XyZ-\r\n", .malformed("malformed close delimiter")),
    .init(
        "padding before close dashes", "--XyZ\r\n\(disposition)\r\nv\r\n--XyZ --",
        .malformed("unexpected bytes after boundary")),

    // Part headers (RFC 7578 §4, RFC 9110 §5).
    .init(
        "header without colon", "--XyZ\r\n\(disposition)X-Note\r\n\r\nv\r\n--XyZ--",
        .malformed("part header without colon")),
    .init("no headers at all", "--XyZ\r\n\r\nv\r\n--XyZ--", .malformed("part without Content-Disposition: form-data")),
    .init(
        "no Content-Disposition", "--XyZ\r\nContent-Type: text/plain\r\n\r\nv\r\n--XyZ--",
        .malformed("part without Content-Disposition: form-data")),
    .init(
        "attachment disposition", "--XyZ\r\nContent-Disposition: attachment; name=\"a\"\r\n\r\nv\r\n--XyZ--",
        .malformed("part without Content-Disposition: form-data")),
    .init(
        "no name", "--XyZ\r\nContent-Disposition: form-data; filename=\"a\"\r\n\r\nv\r\n--XyZ--",
        .malformed("Content-Disposition without name")),
    .init(
        "unterminated quote", "--XyZ\r\nContent-Disposition: form-data; name=\"a\r\n\r\nv\r\n--XyZ--",
        .malformed("malformed Content-Disposition")),
    .init(
        "parameter without value", "--XyZ\r\nContent-Disposition: form-data; name\r\n\r\nv\r\n--XyZ--",
        .malformed("malformed Content-Disposition")),
    .init(
        "two Content-Dispositions",
        "--XyZ\r\n\(disposition)content-disposition: form-data; name=\"b\"\r\n\r\nv\r\n--XyZ--",
        .malformed("more than one Content-Disposition")),
    .init(
        "bare LF in headers", "--XyZ\r\n\(disposition)X-A: b\n\r\nv\r\n--XyZ--", .malformed("bare LF in part header")),
    .init(
        "LF-only header section", "--XyZ\r\nContent-Disposition: form-data; name=a\n\nv\r\n--XyZ--",
        .malformed("bare LF in part header")),
    .init(
        "bare CR in headers", "--XyZ\r\n\(disposition)X-A: b\rc\r\n\r\nv\r\n--XyZ--",
        .malformed("bare CR in part header")),
    .init("folded header", "--XyZ\r\n\(disposition)X-A: b\r\n c\r\n\r\nv\r\n--XyZ--", .malformed("folded part header")),
    .init(
        "space before colon", "--XyZ\r\n\(disposition)X-A : b\r\n\r\nv\r\n--XyZ--",
        .malformed("invalid part header name")),
    .init(
        "empty header name", "--XyZ\r\n\(disposition): b\r\n\r\nv\r\n--XyZ--", .malformed("invalid part header name")),
    .init(
        "NUL in header value", "--XyZ\r\n\(disposition)X-A: b\0c\r\n\r\nv\r\n--XyZ--",
        .malformed("control character in part header")),
    .init(
        "malformed second part after a valid one", "--XyZ\r\n\(disposition)\r\nv\r\n--XyZ\r\nbad\r\n\r\nw\r\n--XyZ--",
        .malformed("part header without colon")),
]

@Suite("MultipartParser: malformed bodies")
struct MultipartMalformedTests {
    @Test(arguments: malformedMultipartCorpus)
    func rejects(_ testCase: MalformedMultipart) {
        let outcome = parseMultipartUnderEverySplit(testCase.input, boundary: "XyZ")
        #expect(outcome.error == testCase.error, "\(outcome)")
        #expect(outcome.error?.kind == .malformed)
    }

    @Test func everyTruncationOfAValidBodyFailsAtFinish() throws {
        let body = bytes(
            "pre\r\n--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x\"\r\n\r\n\r\n"
                + "--XyZ\r\n\(disposition)\r\n"
                + "data\r\n--Xy\r\n--XyZ--\r\n")
        let closeEnd = body.count - 2
        for length in 0..<closeEnd {
            let outcome = parseMultipart(Array(body[..<length]), boundary: "XyZ", cuts: [])
            #expect(outcome.error == .unexpectedEnd, "truncated to \(length): \(outcome)")
        }
        for length in closeEnd...body.count {
            #expect(parseMultipart(Array(body[..<length]), boundary: "XyZ", cuts: []).error == nil)
        }
    }

    @Test func limitsTheHeaderSection() throws {
        let limits = MultipartLimits(maxHeaderBytes: 64, maxParts: 16)
        // Exactly 64 bytes of header section (lines with CRLF plus the empty line) is allowed; 65 is not.
        // ("\r\n" is one Character, hence dropLast() below.)
        let line = "Content-Disposition: form-data; name=\"a\"\r\n"
        let filler = "X: " + String(repeating: "y", count: 64 - line.utf8.count - 2 - 5) + "\r\n"
        let fits = bytes("--XyZ\r\n\(line)\(filler)\r\nv\r\n--XyZ--")
        let fitting = parseMultipartUnderEverySplit(fits, boundary: "XyZ", limits: limits)
        #expect(fitting.error == nil, "\(fitting)")
        #expect(fitting.maxBuffered <= 64)
        let tooBig = bytes("--XyZ\r\n\(line)\(filler.dropLast())y\r\n\r\nv\r\n--XyZ--")
        let outcome = parseMultipartUnderEverySplit(tooBig, boundary: "XyZ", limits: limits)
        #expect(outcome.error == .headerTooLarge)
        #expect(outcome.error?.kind == .headerTooLarge)
        // An endless header is cut off at the limit, not buffered.
        var parser = MultipartParser(boundary: "XyZ", limits: limits)
        _ = try parser.feed(bytes("--XyZ\r\nX: "))
        #expect(throws: MultipartError.headerTooLarge) {
            for _ in 0..<100 { _ = try parser.feed(bytes("aaaaaaaaaa")) }
        }
        #expect(parser.bufferedByteCount <= 64)
    }

    @Test func limitsTheNumberOfParts() throws {
        let limits = MultipartLimits(maxHeaderBytes: 1024, maxParts: 3)
        let three = multipartBody(boundary: "XyZ", parts: Array(repeating: ([formData("a")], bytes("v")), count: 3))
        #expect(parseMultipartUnderEverySplit(three, boundary: "XyZ", limits: limits).error == nil)
        let four = multipartBody(boundary: "XyZ", parts: Array(repeating: ([formData("a")], bytes("v")), count: 4))
        let outcome = parseMultipartUnderEverySplit(four, boundary: "XyZ", limits: limits)
        #expect(outcome.error == .tooManyParts)
        #expect(outcome.error?.kind == .tooManyParts)
    }
}
