/// Header fields fixed for a resource (a download's ETag, Last-Modified, type and disposition): checked and put in
/// their wire form once, when the resource is loaded, then written into every response about it with one copy
/// (`HTTPResponse.staticHeaders`, after `headers`) instead of one field at a time.
public struct HTTPStaticHeaders: Sendable, Equatable {
    /// `Name: value\r\n` for each field, names in their usual spelling.
    let wireBytes: [UInt8]

    /// No fields.
    public init() {
        wireBytes = []
    }

    /// Names are the program's own: one that is not an RFC 9110 token, or a field the serializer writes itself
    /// (`Content-Length`, `Connection`, `Transfer-Encoding`, `Date`), is a bug and stops the process. Values are
    /// data: CR and LF are dropped from them, as from every header value (no response splitting).
    public init(_ fields: [(name: String, value: String)]) {
        var capacity = 0
        for (name, value) in fields {
            precondition(
                !name.isEmpty && name.utf8.allSatisfy(HTTPRequestParser.isTokenChar),
                "static header name `\(name)` is not a token")
            let lowercased = HTTPHeaders.lowercased(name)
            precondition(
                !ResponseSerializer.withUTF8(lowercased, ResponseSerializer.isFramingHeader),
                "`\(name)` is written by the serializer, not as a static header")
            capacity += name.utf8.count + value.utf8.count + 4
        }
        guard capacity > 0 else {
            wireBytes = []
            return
        }
        wireBytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            var out = ResponseSerializer.HeadWriter(base: buffer.baseAddress!)
            for (name, value) in fields { out.writeField(name: HTTPHeaders.lowercased(name), value: value) }
            count = out.count
        }
    }

    public var isEmpty: Bool { wireBytes.isEmpty }

    /// The bytes these fields add to a response head.
    public var byteCount: Int { wireBytes.count }
}
