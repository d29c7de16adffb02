import ParleyHTTP

/// A header value of the form `type; name=value; name="quoted value"` (RFC 9110 §5.6.6), split into its
/// leading value and its parameters. Shared by the `Content-Type` and `Content-Disposition` readers so both
/// follow one grammar.
struct HeaderParameters: Sendable, Equatable {
    /// The value before the first `;`, trimmed (not lowercased).
    var value: String
    /// Parameters in order, names lowercased (parameter names are case-insensitive, RFC 9110 §5.6.6).
    var parameters: [(name: String, value: String)]

    static func == (lhs: HeaderParameters, rhs: HeaderParameters) -> Bool {
        lhs.value == rhs.value && lhs.parameters.elementsEqual(rhs.parameters) { $0 == $1 }
    }

    /// The first parameter called `name` (lowercase): a repeated parameter is ambiguous, and taking the first
    /// is what browsers do.
    func parameter(_ name: String) -> String? {
        parameters.first { $0.name == name }?.value
    }

    /// Parses `text`; nil when a parameter is not `token=token` or `token=quoted-string`.
    ///
    /// Quoted strings accept `\"` and `\\` as escapes but keep any other backslash literally: browsers do not
    /// escape backslashes in file names (RFC 7578 §4.2 notes they percent-encode `"` instead), so a Windows
    /// path such as `C:\dir\a.txt` must survive.
    init?(parsing text: some StringProtocol) {
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count, bytes[index] != UInt8(ascii: ";") { index += 1 }
        value = String(decoding: Self.trimmed(bytes[0..<index]), as: UTF8.self)
        parameters = []
        while index < bytes.count {
            // At a `;`: skip it and any whitespace; tolerate empty parameters (`a;;b=c`, a trailing `;`).
            index += 1
            index = Self.skipWhitespace(bytes, from: index)
            if index == bytes.count { break }
            if bytes[index] == UInt8(ascii: ";") { continue }
            let nameStart = index
            while index < bytes.count, Self.isTokenByte(bytes[index]) { index += 1 }
            guard index > nameStart else { return nil }
            let name = String(decoding: bytes[nameStart..<index], as: UTF8.self).lowercased()
            index = Self.skipWhitespace(bytes, from: index)
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { return nil }
            index = Self.skipWhitespace(bytes, from: index + 1)
            guard index < bytes.count else { return nil }
            var parameterValue: [UInt8] = []
            if bytes[index] == UInt8(ascii: "\"") {
                index += 1
                var closed = false
                while index < bytes.count {
                    let byte = bytes[index]
                    if byte == UInt8(ascii: "\"") {
                        closed = true
                        index += 1
                        break
                    }
                    if byte == UInt8(ascii: "\\"), index + 1 < bytes.count,
                        bytes[index + 1] == UInt8(ascii: "\"") || bytes[index + 1] == UInt8(ascii: "\\")
                    {
                        parameterValue.append(bytes[index + 1])
                        index += 2
                        continue
                    }
                    parameterValue.append(byte)
                    index += 1
                }
                guard closed else { return nil }
            } else {
                let valueStart = index
                while index < bytes.count, Self.isTokenByte(bytes[index]) { index += 1 }
                guard index > valueStart else { return nil }
                parameterValue = Array(bytes[valueStart..<index])
            }
            index = Self.skipWhitespace(bytes, from: index)
            guard index == bytes.count || bytes[index] == UInt8(ascii: ";") else { return nil }
            parameters.append((name, String(decoding: parameterValue, as: UTF8.self)))
        }
    }

    /// tchar (RFC 9110 §5.6.2).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    static func isToken(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTokenByte)
    }

    private static func skipWhitespace(_ bytes: [UInt8], from start: Int) -> Int {
        var index = start
        while index < bytes.count, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") {
            index += 1
        }
        return index
    }

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var slice = bytes
        while let first = slice.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") {
            slice = slice.dropFirst()
        }
        while let last = slice.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") {
            slice = slice.dropLast()
        }
        return slice
    }
}

/// RFC 5987 / RFC 8187 `ext-value`: `charset'[language]'percent-encoded`, e.g. `UTF-8''na%C3%AFve.txt`.
enum ExtendedParameterValue {
    /// Decodes an ext-value; nil when it is malformed, uses a charset other than UTF-8 or ISO-8859-1, or (for
    /// UTF-8) does not decode to valid UTF-8, so the caller falls back to the plain parameter.
    static func decode(_ text: String) -> String? {
        let pieces = text.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard pieces.count == 3 else { return nil }
        let charset = pieces[0].lowercased()
        var bytes: [UInt8] = []
        var iterator = pieces[2].utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(PercentDecoding.hexValue),
                    let low = iterator.next().flatMap(PercentDecoding.hexValue)
                else { return nil }
                bytes.append(high << 4 | low)
            } else if isAttrChar(byte) {
                bytes.append(byte)
            } else {
                return nil
            }
        }
        switch charset {
        case "utf-8":
            return String(validating: bytes, as: UTF8.self)
        case "iso-8859-1":
            // Latin-1 maps byte for byte onto the first 256 Unicode scalars.
            return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        default:
            return nil
        }
    }

    /// attr-char (RFC 5987 §3.2.1): the bytes that may appear unencoded in an ext-value.
    static func isAttrChar(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "+"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"),
            UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }
}
