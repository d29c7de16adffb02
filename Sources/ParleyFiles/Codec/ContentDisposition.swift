/// Builds `Content-Disposition` response values (RFC 6266) that carry a user's file name safely: every client
/// gets a quoted ASCII `filename`, and clients that read RFC 5987 (all current browsers) get the exact name in
/// `filename*`. The name comes from an upload, so it is treated as hostile: nothing in it can end the header,
/// add a parameter, point into a directory, or reorder how the name displays.
public enum ContentDisposition {
    public enum Kind: String, Sendable {
        /// Display in the browser (images, video).
        case inline
        /// Save as a file.
        case attachment
    }

    /// The name used when nothing printable is left of the given one.
    public static let fallbackFilename = "download"

    /// `inline; filename="a.pdf"`, or with `; filename*=UTF-8''...` added when the name is not plain ASCII.
    public static func value(disposition: Kind, filename: String) -> String {
        let name = sanitized(filename)
        var ascii = ""
        for character in name {
            switch character {
            // RFC 6266 Appendix D: `%` may be taken as an escape, and `"` / `\` need quoting that many clients
            // get wrong, so none of them go into the quoted fallback.
            case "\"", "%": ascii.append("_")
            case _ where character.isASCII: ascii.append(character)
            default: ascii.append("_")
            }
        }
        var value = "\(disposition.rawValue); filename=\"\(ascii)\""
        if ascii != name {
            value += "; filename*=UTF-8''" + percentEncoded(name)
        }
        return value
    }

    /// The name without what must never reach a header or a file system: control characters (C0, DEL, C1,
    /// which includes CR and LF), Unicode line separators and bidirectional controls (which can make
    /// `evil\u{202E}fdp.exe` display as `evilexe.pdf`), and path separators. Surrounding spaces are trimmed.
    static func sanitized(_ filename: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in filename.unicodeScalars {
            switch scalar.value {
            case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0xFEFF:
                continue
            case 0x2F, 0x5C: // "/" and "\"
                continue
            default:
                scalars.append(scalar)
            }
        }
        let trimmed = Substring(String(scalars)).trimmingCharacters(where: { $0 == " " })
        return trimmed.isEmpty ? fallbackFilename : String(trimmed)
    }

    /// RFC 5987 §3.2.1: UTF-8 bytes outside attr-char as `%XX` (uppercase hex).
    static func percentEncoded(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        for byte in text.utf8 {
            if ExtendedParameterValue.isAttrChar(byte) {
                bytes.append(byte)
            } else {
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
