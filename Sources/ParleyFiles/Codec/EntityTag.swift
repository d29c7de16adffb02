/// Entity-tag helpers for conditional GETs (RFC 9110 §8.8.3, §13.1.2), so clients that already hold a file
/// get a 304 instead of the bytes again.
public enum EntityTag {
    /// `"opaque"`: the strong entity-tag for an opaque value (for blobs, the content hash). Characters that
    /// an entity-tag cannot hold (RFC 9110 §8.8.3 etagc: no `"`, spaces or controls) are dropped.
    public static func quoted(_ opaque: String) -> String {
        "\"" + String(String.UnicodeScalarView(opaque.unicodeScalars.filter(isETagCharacter))) + "\""
    }

    /// Whether an `If-None-Match` field value matches `etag`, using the weak comparison RFC 9110 §13.1.2
    /// requires (`W/"a"` matches `"a"`); `*` matches any current representation. A true answer means 304 for
    /// GET and HEAD.
    ///
    /// - Parameter etag: the representation's entity-tag as sent in `ETag` (`"abc"` or `W/"abc"`); a bare
    ///   opaque value (`abc`) is taken as `"abc"`.
    public static func ifNoneMatch(_ header: String?, matches etag: String) -> Bool {
        guard let header else { return false }
        let current = opaqueTag(etag)
        let bytes = Array(header.utf8)
        var index = skipSeparators(bytes, from: 0)
        if index < bytes.count, bytes[index] == UInt8(ascii: "*"),
            skipSeparators(bytes, from: index + 1) == bytes.count
        {
            return true
        }
        // 1#entity-tag, where entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE. A comma is an etagc, so elements
        // are read tag by tag rather than split on commas.
        while index < bytes.count {
            if bytes[index...].starts(with: "W/".utf8) { index += 2 }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                // Not an entity-tag: skip to the next element and keep looking.
                while index < bytes.count, bytes[index] != UInt8(ascii: ",") { index += 1 }
                index = skipSeparators(bytes, from: index)
                continue
            }
            let start = index + 1
            guard let end = bytes[start...].firstIndex(of: UInt8(ascii: "\"")) else { return false }
            if bytes[start..<end].elementsEqual(current.utf8) { return true }
            index = skipSeparators(bytes, from: end + 1)
        }
        return false
    }

    /// The opaque-tag of an entity-tag, without `W/` and the quotes.
    static func opaqueTag(_ etag: String) -> Substring {
        var tag = Substring(etag).trimmingCharacters(where: { $0 == " " || $0 == "\t" })
        if tag.hasPrefix("W/\"") { tag = tag.dropFirst(2) }
        if tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") { tag = tag.dropFirst().dropLast() }
        return tag
    }

    private static func skipSeparators(_ bytes: [UInt8], from start: Int) -> Int {
        var index = start
        while index < bytes.count,
            [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: ",")].contains(bytes[index])
        {
            index += 1
        }
        return index
    }

    /// etagc = %x21 / %x23-7E / obs-text; obs-text is left out so a tag is always ASCII.
    private static func isETagCharacter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value == 0x21 || (0x23...0x7E).contains(scalar.value)
    }
}
