/// The media type and file extension Parley stores and serves a file under.
public struct DetectedType: Sendable, Hashable, CustomStringConvertible {
    /// `type/subtype`, lowercase, without parameters.
    public var mimeType: String
    /// Normalised extension without the dot: lowercase `[a-z0-9]{1,10}` (`jpg`, never `jpeg`).
    public var ext: String

    public init(mimeType: String, ext: String) {
        self.mimeType = mimeType
        self.ext = ext
    }

    public var description: String { "\(mimeType) (.\(ext))" }

    public static let octetStream = DetectedType(mimeType: "application/octet-stream", ext: "bin")
    public static let plainText = DetectedType(mimeType: "text/plain", ext: "txt")
}

/// Decides what an uploaded file is from its first bytes, so that what Parley serves (and whether it
/// thumbnails or transcodes) never rests on the client's word alone: a `.jpg` that is really a PNG is served
/// as `image/png`. Only when the content says nothing does it fall back to the declared `Content-Type`, then
/// to the file name's extension.
public enum MIMESniffer {
    /// How many leading bytes `detect` looks at; pass at least this many when the file is that long.
    public static let prefixLength = 4096

    /// - Parameters:
    ///   - prefix: the first bytes of the content (up to ``prefixLength``; more are ignored). Shorter means the
    ///     whole file.
    ///   - declaredType: the client's `Content-Type` for the file, if any.
    ///   - filename: the client's file name, if any.
    public static func detect(prefix: [UInt8], declaredType: String?, filename: String?) -> DetectedType {
        let head = prefix.prefix(prefixLength)
        let declared = declaredType.flatMap(normalizedMediaType).flatMap { type -> DetectedType? in
            // `application/octet-stream` says "I don't know": the file name may know better.
            type == DetectedType.octetStream.mimeType
                ? nil : DetectedType(mimeType: type, ext: extensionsByType[type] ?? (isTextual(type) ? "txt" : "bin"))
        }
        let named = filename.flatMap(fileExtension).flatMap { ext in
            typesByExtension[ext].map { DetectedType(mimeType: $0, ext: ext) }
        }
        let claims = [declared, named].compactMap { $0 }

        if let sniffed = magicType(head) {
            // A claim may name a more specific kind of what the bytes show (an .xlsx whose `xl/` entries lie
            // past the prefix, an audio-only MP4); one that contradicts them loses.
            return claims.first { refines(sniffed, $0) } ?? sniffed
        }
        if looksLikeText(head, truncated: prefix.count >= prefixLength) {
            return claims.first { isTextual($0.mimeType) } ?? .plainText
        }
        return claims.first ?? .octetStream
    }

    /// Whether `claim` is a more specific name for content sniffed as `sniffed`.
    static func refines(_ sniffed: DetectedType, _ claim: DetectedType) -> Bool {
        switch sniffed.mimeType {
        case "application/zip": zipBasedTypes.contains(claim.mimeType)
        case "video/mp4": claim.mimeType == "audio/mp4" || claim.mimeType == "video/x-m4v"
        default: false
        }
    }

    /// `type/subtype` of a media type value (RFC 9110 §8.3.1), lowercased, parameters dropped, common
    /// non-standard aliases mapped to their registered names (`image/jpg` -> `image/jpeg`); nil when the value
    /// is not two tokens around a `/`.
    public static func normalizedMediaType(_ value: String) -> String? {
        let essence = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let trimmed = essence.trimmingCharacters(where: { $0 == " " || $0 == "\t" }).lowercased()
        let halves = trimmed.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.count == 2, HeaderParameters.isToken(halves[0]), HeaderParameters.isToken(halves[1]) else {
            return nil
        }
        return mediaTypeAliases[trimmed] ?? trimmed
    }

    /// The normalised extension of a file name (`Photo.JPEG` -> `jpg`), or nil when it has none or it is not
    /// `[a-z0-9]{1,10}` after lowercasing. Path components are ignored, and a leading dot (`.profile`) does
    /// not start an extension.
    public static func fileExtension(of filename: String) -> String? {
        let base = filename.split(omittingEmptySubsequences: false) { $0 == "/" || $0 == "\\" }.last ?? ""
        guard let dot = base.lastIndex(of: "."), dot != base.startIndex else { return nil }
        return normalizedExtension(base[base.index(after: dot)...])
    }

    /// `ext` lowercased with aliases folded (`jpeg` -> `jpg`, `tif` -> `tiff`), or nil unless `[a-z0-9]{1,10}`.
    public static func normalizedExtension(_ ext: some StringProtocol) -> String? {
        let lowered = ext.lowercased()
        guard (1...10).contains(lowered.utf8.count),
            lowered.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) })
        else { return nil }
        return extensionAliases[lowered] ?? lowered
    }

    /// Types whose content is text, so that sniffing "text" does not override a more precise textual claim
    /// (CSV, JSON, Markdown).
    static func isTextual(_ mimeType: String) -> Bool {
        mimeType.hasPrefix("text/") || mimeType.hasSuffix("+xml") || mimeType.hasSuffix("+json")
            || [
                "application/json", "application/xml", "application/javascript", "application/x-yaml",
                "application/yaml", "application/x-sh", "application/sql",
            ].contains(mimeType)
    }
}
