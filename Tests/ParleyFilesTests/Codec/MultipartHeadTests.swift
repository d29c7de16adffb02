import ParleyFiles
import Testing

@Suite("MultipartParser: part heads and the Content-Type boundary")
struct MultipartHeadTests {
    /// Parses one part whose Content-Disposition value is `value` and returns its head.
    func head(disposition value: String, extra: [String] = []) throws -> MultipartPartHead {
        let body = multipartBody(boundary: "b", parts: [(["Content-Disposition: \(value)"] + extra, bytes("v"))])
        let outcome = parseMultipartUnderEverySplit(body, boundary: "b")
        try #require(outcome.error == nil, "\(outcome)")
        return try #require(outcome.heads.first)
    }

    @Test func readsNameAndFilename() throws {
        let plain = try head(disposition: "form-data; name=\"avatar\"; filename=\"me.png\"")
        #expect(plain.name == "avatar")
        #expect(plain.filename == "me.png")
        #expect(plain.contentType == nil)
    }

    @Test func dispositionTypeAndParameterNamesAreCaseInsensitive() throws {
        let shouting = try head(disposition: "FORM-DATA; NAME=field; FileName=\"x.txt\"")
        #expect(shouting.name == "field")
        #expect(shouting.filename == "x.txt")
        let lowercaseHeader = multipartBody(
            boundary: "b", parts: [(["content-disposition: form-data; name=a", "CONTENT-TYPE: image/png"], [])])
        let outcome = parseMultipartUnderEverySplit(lowercaseHeader, boundary: "b")
        #expect(outcome.heads.first?.contentType == "image/png")
        #expect(outcome.heads.first?.header("Content-Type") == "image/png")
    }

    @Test func toleratesWhitespaceAndEmptyParameters() throws {
        let spaced = try head(disposition: "form-data ;name = \"a\" ;; filename=\"b c.txt\" ;")
        #expect(spaced.name == "a")
        #expect(spaced.filename == "b c.txt")
    }

    @Test func keepsUTF8AndBackslashesInQuotedFilenames() throws {
        let chinese = try head(disposition: "form-data; name=\"f\"; filename=\"报告 2024.pdf\"")
        #expect(chinese.filename == "报告 2024.pdf")
        let windows = try head(disposition: "form-data; name=\"f\"; filename=\"C:\\Users\\me\\a.txt\"")
        #expect(windows.filename == "C:\\Users\\me\\a.txt")
        let escaped = try head(disposition: "form-data; name=\"f\"; filename=\"say \\\"hi\\\".txt\"")
        #expect(escaped.filename == "say \"hi\".txt")
        let semicolon = try head(disposition: "form-data; name=\"f\"; filename=\"a;b=c.txt\"")
        #expect(semicolon.filename == "a;b=c.txt")
        let empty = try head(disposition: "form-data; name=\"f\"; filename=\"\"")
        #expect(empty.filename == "")
    }

    @Test func prefersRFC5987Filename() throws {
        let both = try head(
            disposition: "form-data; name=\"f\"; filename=\"fallback.txt\"; filename*=UTF-8''%E6%96%87%E4%BB%B6.txt")
        #expect(both.filename == "文件.txt")
        let first = try head(disposition: "form-data; name=\"f\"; filename*=utf-8'en'na%C3%AFve%20file.txt")
        #expect(first.filename == "naïve file.txt")
        let latin1 = try head(disposition: "form-data; name=\"f\"; filename*=ISO-8859-1''%E9t%E9.txt")
        #expect(latin1.filename == "été.txt")
        let emoji = try head(disposition: "form-data; name=\"f\"; filename*=UTF-8''%F0%9F%98%80.png")
        #expect(emoji.filename == "😀.png")
    }

    @Test(arguments: [
        "UTF-8''%E6%96%87%E4%BB%B6%", "UTF-8''%ZZ", "UTF-8''%C3", "\"UTF-8''a b\"", "KOI8-R''%E9", "UTF-8'a.txt",
    ])
    func fallsBackWhenFilenameStarIsUndecodable(_ value: String) throws {
        let parsed = try head(disposition: "form-data; name=\"f\"; filename=\"plain.txt\"; filename*=\(value)")
        #expect(parsed.filename == "plain.txt")
    }

    @Test func keepsEveryHeaderInOrder() throws {
        let parsed = try head(
            disposition: "form-data; name=\"f\"", extra: ["Content-Type: image/jpeg; q=1", "X-Custom:  spaced  "])
        #expect(parsed.contentType == "image/jpeg; q=1")
        #expect(parsed.headers.map(\.name) == ["Content-Disposition", "Content-Type", "X-Custom"])
        #expect(parsed.headers.last?.value == "spaced")
        #expect(parsed.header("x-custom") == "spaced")
        #expect(parsed.header("missing") == nil)
    }

    static let contentTypes: [(String, String?)] = [
        ("multipart/form-data; boundary=abc", "abc"),
        ("multipart/form-data; boundary=\"abc\"", "abc"),
        ("Multipart/Form-Data;Boundary=abc", "abc"),
        ("  multipart/form-data ;  boundary = abc  ", "abc"),
        (
            "multipart/form-data; charset=utf-8; boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW",
            "----WebKitFormBoundary7MA4YWxkTrZu0gW"
        ),
        ("multipart/form-data; boundary=\"with space and :?=\"", "with space and :?="),
        ("multipart/form-data; boundary=" + String(repeating: "a", count: 70), String(repeating: "a", count: 70)),
        ("multipart/form-data; boundary=a; boundary=b", "a"),
        // Not a multipart/form-data body, or no usable boundary.
        ("multipart/mixed; boundary=abc", nil),
        ("application/x-www-form-urlencoded", nil),
        ("multipart/form-data", nil),
        ("multipart/form-data; boundary=", nil),
        ("multipart/form-data; boundary=\"\"", nil),
        ("multipart/form-data; boundary=" + String(repeating: "a", count: 71), nil),
        ("multipart/form-data; boundary=\"ends with space \"", nil),
        ("multipart/form-data; boundary=\"has\\\"quote\"", nil),
        ("multipart/form-data; boundary=a*b", nil),
        ("multipart/form-data; boundary=\"unterminated", nil),
        ("multipart/form-data; boundary=\"caf\u{E9}\"", nil),
        ("multipart/form-data; boundary=\"cr\rlf\"", nil),
        ("multipart/form-data-x; boundary=abc", nil),
        ("", nil),
    ]

    @Test(arguments: contentTypes)
    func readsTheBoundaryFromContentType(_ value: String, _ expected: String?) {
        #expect(MultipartParser.boundary(fromContentType: value) == expected)
    }

    @Test func validatesBoundaries() {
        #expect(MultipartParser.isValidBoundary("a"))
        #expect(MultipartParser.isValidBoundary("'()+_,-./:=? x"))
        #expect(!MultipartParser.isValidBoundary(""))
        #expect(!MultipartParser.isValidBoundary("x "))
        #expect(!MultipartParser.isValidBoundary("a\r\nb"))
        #expect(!MultipartParser.isValidBoundary("a\"b"))
    }
}
