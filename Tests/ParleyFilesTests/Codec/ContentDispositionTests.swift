import ParleyFiles
import Testing

@Suite("ContentDisposition")
struct ContentDispositionTests {
    static let cases: [(String, ContentDisposition.Kind, String, String)] = [
        ("plain ASCII", .attachment, "report.pdf", "attachment; filename=\"report.pdf\""),
        ("inline", .inline, "photo.jpg", "inline; filename=\"photo.jpg\""),
        (
            "spaces and punctuation kept", .attachment, "Q3 report (final) v2.pdf",
            "attachment; filename=\"Q3 report (final) v2.pdf\""
        ),
        (
            "Chinese", .attachment, "报告.pdf",
            "attachment; filename=\"__.pdf\"; filename*=UTF-8''%E6%8A%A5%E5%91%8A.pdf"
        ),
        (
            "accented", .inline, "café menu.txt",
            "inline; filename=\"caf_ menu.txt\"; filename*=UTF-8''caf%C3%A9%20menu.txt"
        ),
        (
            "decomposed accent is one character", .inline, "cafe\u{301}.txt",
            "inline; filename=\"caf_.txt\"; filename*=UTF-8''cafe%CC%81.txt"
        ),
        ("emoji", .attachment, "😀.png", "attachment; filename=\"_.png\"; filename*=UTF-8''%F0%9F%98%80.png"),
        (
            "ZWJ emoji sequence is one character", .attachment, "👩‍💻.txt",
            "attachment; filename=\"_.txt\"; filename*=UTF-8''%F0%9F%91%A9%E2%80%8D%F0%9F%92%BB.txt"
        ),
        (
            "double quotes", .attachment, "say \"hi\".txt",
            "attachment; filename=\"say _hi_.txt\"; filename*=UTF-8''say%20%22hi%22.txt"
        ),
        ("percent", .attachment, "100%25.txt", "attachment; filename=\"100_25.txt\"; filename*=UTF-8''100%2525.txt"),
        ("semicolon and equals stay quoted", .attachment, "a;b=c.txt", "attachment; filename=\"a;b=c.txt\""),
        (
            "single quote is safe in the quoted form", .attachment, "it's.txt",
            "attachment; filename=\"it's.txt\""
        ),
        (
            "CRLF header injection", .attachment, "a.txt\r\nSet-Cookie: x=1",
            "attachment; filename=\"a.txtSet-Cookie: x=1\""
        ),
        ("bare LF and NUL", .attachment, "a\nb\0c.txt", "attachment; filename=\"abc.txt\""),
        (
            "quote breaking out into a parameter", .attachment, "x\"; filename=\"evil.exe",
            "attachment; filename=\"x_; filename=_evil.exe\"; filename*=UTF-8''x%22%3B%20filename%3D%22evil.exe"
        ),
        ("C1 control", .attachment, "a\u{85}b.txt", "attachment; filename=\"ab.txt\""),
        ("path separators", .attachment, "../../etc/passwd", "attachment; filename=\"....etcpasswd\""),
        ("Windows path", .attachment, "C:\\Users\\me\\a.txt", "attachment; filename=\"C:Usersmea.txt\""),
        ("right-to-left override", .attachment, "invoice\u{202E}fdp.exe", "attachment; filename=\"invoicefdp.exe\""),
        ("only controls", .attachment, "\r\n\t", "attachment; filename=\"download\""),
        ("empty", .inline, "", "inline; filename=\"download\""),
        ("surrounding spaces", .attachment, "  a.txt  ", "attachment; filename=\"a.txt\""),
        (
            "attr-chars unescaped", .attachment, "a!#$&+-.^_`|~b€",
            "attachment; filename=\"a!#$&+-.^_`|~b_\"; filename*=UTF-8''a!#$&+-.^_`|~b%E2%82%AC"
        ),
    ]

    @Test(arguments: cases)
    func buildsTheHeaderValue(_ name: String, _ kind: ContentDisposition.Kind, _ filename: String, _ expected: String) {
        #expect(ContentDisposition.value(disposition: kind, filename: filename) == expected, "\(name)")
    }

    @Test(arguments: cases)
    func neverEmitsControlsOrUnbalancedQuotes(
        _ name: String, _ kind: ContentDisposition.Kind, _ filename: String, _ expected: String
    ) {
        let value = ContentDisposition.value(disposition: kind, filename: filename)
        #expect(value.utf8.allSatisfy { (0x20...0x7E).contains($0) }, "\(name)")
        #expect(value.utf8.filter { $0 == UInt8(ascii: "\"") }.count == 2, "\(name)")
        #expect(!value.contains("\\"))
    }

    @Test func extendedValueRoundTripsThroughTheMultipartReader() throws {
        // The filename* this writes is one the upload side decodes back to the same name.
        for name in ["报告 2024.pdf", "😀 \"quoted\" 100%.png", "naïve.txt"] {
            let value = ContentDisposition.value(disposition: .attachment, filename: name)
            let formValue = "form-data; name=\"f\"" + value.dropFirst("attachment".count)
            var parser = MultipartParser(boundary: "b")
            let events = try parser.feed(bytes("--b\r\nContent-Disposition: \(formValue)\r\n\r\n\r\n--b--"))
            #expect(
                events.first
                    == .partBegin(
                        MultipartPartHead(
                            name: "f", filename: name, contentType: nil,
                            headers: [MultipartHeader(name: "Content-Disposition", value: formValue)])))
        }
    }
}
