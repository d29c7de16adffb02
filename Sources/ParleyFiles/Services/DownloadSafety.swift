import ParleyHTTP
import ParleyObservability

/// What a download may let a browser do with a file: served from the API's origin, an upload must never run as a
/// page of it. The type served is one the sniffer could store (so a row typed by an older, more trusting sniffer
/// goes out as octets), only raster images, audio and video display inline, and every answer forbids scripts,
/// plugins and embedding by other sites whatever the browser makes of the bytes.
public enum DownloadSafety {
    /// On every `/files/` answer (files, 206, 304, redirects, errors): no script, no plugin, no subresource, a
    /// unique origin even if a browser renders it (`sandbox`); readable only by the same site; no type sniffing.
    public static let headerFields: [(name: String, value: String)] = [
        ("Content-Security-Policy", "default-src 'none'; sandbox"),
        ("Cross-Origin-Resource-Policy", "same-site"),
        ("X-Content-Type-Options", "nosniff"),
    ]

    /// `headerFields` in wire form, for answers that carry nothing else fixed (304, redirects, errors).
    public static let headers = HTTPStaticHeaders(headerFields)

    /// The `Content-Type` a stored type is served under.
    public static func servedType(stored: String) -> String {
        MIMESniffer.storableTypes.contains(stored) ? stored : DetectedType.octetStream.mimeType
    }

    /// Whether a file served as `servedType` may be shown in the browser rather than saved: raster images (the
    /// sniffer stores no other image), audio and video.
    public static func mayDisplayInline(servedType: String) -> Bool {
        MIMESniffer.storableTypes.contains(servedType)
            && (servedType.hasPrefix("image/") || servedType.hasPrefix("audio/") || servedType.hasPrefix("video/"))
    }

    /// The error envelope for a failed download (through the one error mapper), with `headers`.
    public static func error(mapping error: any Error, logger: Logger) -> HTTPResponse {
        var response = HTTPResponse.error(mapping: error, logger: logger)
        response.staticHeaders = headers
        return response
    }
}
