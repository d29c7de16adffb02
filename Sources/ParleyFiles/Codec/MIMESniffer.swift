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

/// Decides what an uploaded file is from its first bytes alone, so that what Parley serves never rests on the
/// client's word: a `.jpg` that is really a PNG is served as `image/png`, and HTML, SVG, XML or script can never be
/// stored under a type a browser would run. The declared `Content-Type` and the file name's extension only name a
/// more specific kind of what the bytes already prove (an `.xlsx` whose entries lie past the prefix, an audio-only
/// MP4, a `.doc` in a compound file); every such kind is a document or media type that downloads as it is. Text
/// is `text/plain`; text that opens like markup (`<`), or that the client calls an active type (HTML, XML, SVG,
/// script, CSS), is `application/octet-stream`, as is anything the bytes do not prove.
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
        let declared = declaredType.flatMap(normalizedMediaType).map { type in
            DetectedType(mimeType: type, ext: extensionsByType[type] ?? "bin")
        }
        let named = filename.flatMap(fileExtension).flatMap { ext in
            typesByExtension[ext].map { DetectedType(mimeType: $0, ext: ext) }
        }
        let claims = [declared, named].compactMap { $0 }

        if let sniffed = magicType(head) {
            // A claim may name a more specific kind of what the bytes show; one that contradicts them loses.
            return claims.first { refines(sniffed, $0) } ?? sniffed
        }
        if looksLikeText(head, truncated: prefix.count >= prefixLength) {
            // Markup is never stored as text (a browser that ignored nosniff would render it), nor is text the
            // client itself calls HTML, script or style.
            if opensLikeMarkup(head) || claims.contains(where: { isActiveContent($0.mimeType) }) { return .octetStream }
            return .plainText
        }
        return .octetStream
    }

    /// Whether `claim` is a more specific name for content sniffed as `sniffed`.
    static func refines(_ sniffed: DetectedType, _ claim: DetectedType) -> Bool {
        switch sniffed.mimeType {
        case "application/zip": zipBasedTypes.contains(claim.mimeType)
        case compoundFileType: compoundFileBasedTypes.contains(claim.mimeType)
        case "video/mp4": claim.mimeType == "audio/mp4" || claim.mimeType == "video/x-m4v"
        default: false
        }
    }

    /// Types a browser may run or render as a document of the site: HTML, XHTML, SVG and every other XML, scripts,
    /// style sheets, Flash. Never stored; rows from before this rule are served as `application/octet-stream`.
    public static func isActiveContent(_ mimeType: String) -> Bool {
        mimeType.hasSuffix("+xml") || mimeType.contains("javascript") || mimeType.contains("ecmascript")
            || activeTypes.contains(mimeType)
    }

    /// Text whose first byte after an optional BOM and white space is `<`: HTML, XML, SVG and their kin all open
    /// so (the WHATWG MIME Sniffing standard's HTML and XML patterns, §7.1, are each a `<` tag).
    static func opensLikeMarkup(_ bytes: ArraySlice<UInt8>) -> Bool {
        var b = bytes
        if b.starts(with: [0xEF, 0xBB, 0xBF]) { b = b.dropFirst(3) }
        return b.first { ![0x09, 0x0A, 0x0C, 0x0D, 0x20].contains($0) } == UInt8(ascii: "<")
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
}
