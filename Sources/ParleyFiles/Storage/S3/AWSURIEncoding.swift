/// Percent-encoding as SigV4 wants it: every byte of the UTF-8 form except the unreserved characters
/// `A-Z a-z 0-9 - . _ ~` becomes `%XY` (upper-case hex). S3 paths are encoded once, segment by segment, and are
/// not normalised (`//` and `.` segments stay as they are).
enum AWSURIEncoding {
    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// Encodes `string`; `/` is kept when `keepSlash` (paths) and encoded otherwise (query names and values).
    static func encode(_ string: String, keepSlash: Bool = false) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(string.utf8.count)
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                output.append(byte)
            case UInt8(ascii: "/") where keepSlash:
                output.append(byte)
            default:
                output.append(UInt8(ascii: "%"))
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The canonical (and sent) form of a path; the empty path is `/`.
    static func path(_ path: String) -> String {
        path.isEmpty ? "/" : encode(path, keepSlash: true)
    }

    /// `name=value` pairs, each encoded, sorted by name then value, joined with `&`. A parameter without a value
    /// (`?uploads`) is `uploads=`.
    static func canonicalQuery(_ query: [(String, String)]) -> String {
        query.map { (encode($0.0), encode($0.1)) }
            .sorted { lhs, rhs in
                lhs.0 == rhs.0
                    ? lhs.1.utf8.lexicographicallyPrecedes(rhs.1.utf8)
                    : lhs.0.utf8.lexicographicallyPrecedes(rhs.0.utf8)
            }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }
}
