import ParleyBytes

extension JSONValue {
    /// The compact serialization: no whitespace, object members in stored order, non-ASCII as raw
    /// UTF-8.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        write(to: &out)
        return out
    }

    /// The compact serialization as a `String`.
    public var serializedString: String {
        String(decoding: serialized(), as: UTF8.self)
    }

    /// Appends the compact serialization to `out`.
    public func write(to out: inout [UInt8]) {
        switch self {
        case .null:
            JSONWriter.appendLiteral("null", to: &out)
        case .bool(let bool):
            JSONWriter.appendLiteral(bool ? "true" : "false", to: &out)
        case .number(let number):
            out.append(contentsOf: number.text.utf8)
        case .string(let string):
            JSONString.append(string, to: &out)
        case .array(let array):
            out.append(UInt8(ascii: "["))
            for (offset, element) in array.enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                element.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            for (offset, member) in object.entries.enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                JSONString.append(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                member.value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }
}

enum JSONWriter {
    @inline(__always)
    static func appendLiteral(_ literal: StaticString, to out: inout [UInt8]) {
        literal.withUTF8Buffer { out.append(contentsOf: $0) }
    }
}

/// JSON string escaping for hand-written serializers.
public enum JSONString {
    /// Appends `string` as a JSON string literal, quotes included. Escapes only what RFC 8259 §7
    /// requires: `"`, `\` and control characters (\b \f \n \r \t short, the rest as \u00xx).
    /// Everything else, `/` and U+2028/U+2029 included, is written as raw UTF-8.
    public static func append(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        forEachRun(
            of: string, plain: { out.append(contentsOf: $0) },
            escape: { byte in withEscape(for: byte) { out.append(contentsOf: $0) } })
        out.append(UInt8(ascii: "\""))
    }

    /// The same into a `ByteBuffer` (log lines).
    public static func append(_ string: String, to out: inout ByteBuffer) {
        out.append(UInt8(ascii: "\""))
        forEachRun(of: string, plain: { out.append($0) }, escape: { byte in withEscape(for: byte) { out.append($0) } })
        out.append(UInt8(ascii: "\""))
    }

    /// Splits `string` into runs of bytes that need no escaping (copied in one go) and single bytes that do.
    @inline(__always)
    private static func forEachRun(
        of string: String, plain: (UnsafeBufferPointer<UInt8>) -> Void,
        escape: (UInt8) -> Void
    ) {
        var string = string
        string.withUTF8 { bytes in
            var runStart = 0
            for offset in 0..<bytes.count {
                let byte = bytes[offset]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if offset > runStart { plain(UnsafeBufferPointer(rebasing: bytes[runStart..<offset])) }
                escape(byte)
                runStart = offset + 1
            }
            if bytes.count > runStart { plain(UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count])) }
        }
    }

    /// The escape sequence of `byte` (`\"`, `\n`, `\u001f`, ...), formatted on the stack.
    private static func withEscape(for byte: UInt8, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        var sequence: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (UInt8(ascii: "\\"), 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &sequence) { raw in
            var count = 2
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): raw[1] = byte
            case 0x08: raw[1] = UInt8(ascii: "b")
            case 0x0C: raw[1] = UInt8(ascii: "f")
            case 0x0A: raw[1] = UInt8(ascii: "n")
            case 0x0D: raw[1] = UInt8(ascii: "r")
            case 0x09: raw[1] = UInt8(ascii: "t")
            default:
                let hex: StaticString = "0123456789abcdef"
                raw[1] = UInt8(ascii: "u")
                raw[2] = UInt8(ascii: "0")
                raw[3] = UInt8(ascii: "0")
                raw[4] = hex.utf8Start[Int(byte >> 4)]
                raw[5] = hex.utf8Start[Int(byte & 0x0F)]
                count = 6
            }
            body(UnsafeBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count))
        }
    }
}

extension JSONString {
    /// Appends raw UTF-8 `bytes` escaped as the inside of a JSON string literal (no quotes), with the same rules as
    /// `append(_:to:)`.
    static func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var runStart = 0
        for offset in 0..<bytes.count {
            let byte = bytes[offset]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            if offset > runStart { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<offset])) }
            withEscape(for: byte) { out.append(contentsOf: $0) }
            runStart = offset + 1
        }
        if bytes.count > runStart {
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
        }
    }
}
