import ParleyFiles
import Testing

/// What a download tells the browser about a stored type, including types stored before the sniffer stopped
/// trusting clients.
@Suite struct DownloadSafetyTests {
    static let served: [(stored: String, served: String, inline: Bool)] = [
        ("image/png", "image/png", true), ("image/jpeg", "image/jpeg", true), ("image/gif", "image/gif", true),
        ("image/webp", "image/webp", true), ("image/heic", "image/heic", true), ("image/avif", "image/avif", true),
        ("image/bmp", "image/bmp", true), ("image/tiff", "image/tiff", true), ("audio/mpeg", "audio/mpeg", true),
        ("audio/mp4", "audio/mp4", true), ("audio/ogg", "audio/ogg", true), ("video/mp4", "video/mp4", true),
        ("video/webm", "video/webm", true), ("video/quicktime", "video/quicktime", true),
        ("application/pdf", "application/pdf", false), ("application/zip", "application/zip", false),
        ("text/plain", "text/plain", false), ("application/octet-stream", "application/octet-stream", false),
        // Rows from before: active or unknown types go out as octets, never inline.
        ("text/html", "application/octet-stream", false), ("image/svg+xml", "application/octet-stream", false),
        ("application/xhtml+xml", "application/octet-stream", false), ("text/xml", "application/octet-stream", false),
        ("application/xml", "application/octet-stream", false),
        ("text/javascript", "application/octet-stream", false),
        ("application/javascript", "application/octet-stream", false),
        ("text/css", "application/octet-stream", false),
        ("image/vnd.microsoft.icon", "application/octet-stream", false),
        ("multipart/x-mixed-replace", "application/octet-stream", false),
        ("text/csv", "application/octet-stream", false), ("", "application/octet-stream", false),
    ]

    @Test(arguments: served)
    func servesOnlyTypesTheSnifferCouldStore(_ stored: String, _ served: String, _ inline: Bool) {
        #expect(DownloadSafety.servedType(stored: stored) == served)
        #expect(DownloadSafety.mayDisplayInline(servedType: DownloadSafety.servedType(stored: stored)) == inline)
    }

    @Test func everyAnswerForbidsScriptsAndSniffing() {
        let fields = Dictionary(
            uniqueKeysWithValues: DownloadSafety.headerFields.map { ($0.name.lowercased(), $0.value) })
        #expect(fields["content-security-policy"] == "default-src 'none'; sandbox")
        #expect(fields["cross-origin-resource-policy"] == "same-site")
        #expect(fields["x-content-type-options"] == "nosniff")
    }
}
