/// What ``MultipartParser`` reports as it reads a `multipart/form-data` body, in order: for each part a
/// `partBegin`, zero or more `partData`, a `partEnd`; then one `end` when the close delimiter is seen.
public enum MultipartEvent: Sendable, Equatable {
    /// A part's header section was read.
    case partBegin(MultipartPartHead)
    /// The next bytes of the current part's body, as they arrived (never empty). A part's body is the
    /// concatenation of its `partData` events; how it is split depends only on how the input was fed.
    case partData([UInt8])
    /// The current part's body is complete.
    case partEnd
    /// The close delimiter was read; anything after it (the epilogue) is ignored.
    case end
}

/// One header field of a part, as received (name case kept, value trimmed).
public struct MultipartHeader: Sendable, Hashable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// The header section of one part of a `multipart/form-data` body (RFC 7578 §4).
public struct MultipartPartHead: Sendable, Hashable {
    /// The form field name (`Content-Disposition: form-data; name="..."`), required by RFC 7578 §4.2.
    public var name: String
    /// The file name the client sent, if any: `filename*` (RFC 5987) when present and decodable, else
    /// `filename`. It is the client's string as-is (it may hold a path or be empty); sanitise before use.
    public var filename: String?
    /// The part's `Content-Type` value as sent (parameters included), or nil (RFC 7578 §4.4 then implies
    /// `text/plain`).
    public var contentType: String?
    /// Every header field of the part, in order.
    public var headers: [MultipartHeader]

    public init(name: String, filename: String?, contentType: String?, headers: [MultipartHeader]) {
        self.name = name
        self.filename = filename
        self.contentType = contentType
        self.headers = headers
    }

    /// The first header called `name`, compared case-insensitively (RFC 9110 §5.1).
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }
}
