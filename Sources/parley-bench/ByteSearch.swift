/// Finding a byte sequence (the blank line ending an HTTP head, a JSON key in a server frame). Naive search is
/// enough: the needles are a few bytes long and the haystacks a few hundred.
enum ByteSearch {
    /// The offset of the first `needle` at or after `start`, or nil.
    static func firstIndex(of needle: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from start: Int = 0) -> Int? {
        guard !needle.isEmpty, bytes.count >= needle.count, start <= bytes.count - needle.count else { return nil }
        var i = start
        outer: while i <= bytes.count - needle.count {
            if bytes[i] == needle[0] {
                for j in 1..<needle.count where bytes[i + j] != needle[j] {
                    i += 1
                    continue outer
                }
                return i
            }
            i += 1
        }
        return nil
    }

    static func firstIndex(of needle: [UInt8], in bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBufferPointer { firstIndex(of: needle, in: $0) }
    }

    /// CR LF CR LF: the end of an HTTP head.
    static let headEnd: [UInt8] = [13, 10, 13, 10]
}
