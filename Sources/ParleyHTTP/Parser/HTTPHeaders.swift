/// An ordered list of header fields.
///
/// Names are stored lowercased and compared case-insensitively (RFC 9110 §5.1); repeated fields keep
/// their order, which matters for list-valued fields (RFC 9110 §5.3).
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral, Equatable {
    public typealias Element = (name: String, value: String)

    @usableFromInline var fields: [Element]

    public init() {
        fields = []
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        fields = []
        fields.reserveCapacity(elements.count)
        for (name, value) in elements {
            add(name: name, value: value)
        }
    }

    /// Number of field lines (a repeated name counts once per line).
    public var count: Int { fields.count }

    public var underestimatedCount: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[Element]> {
        fields.makeIterator()
    }

    /// Appends a field line, keeping any existing lines with the same name.
    public mutating func add(name: String, value: String) {
        fields.append((name: Self.lowercased(name), value: value))
    }

    /// Replaces the first line named `name` and removes the others, or appends one if there is none.
    public mutating func replaceOrAdd(name: String, value: String) {
        if let first = fields.firstIndex(where: { Self.nameMatches($0.name, name) }) {
            fields[first].value = value
            var index = fields.count - 1
            while index > first {
                if Self.nameMatches(fields[index].name, name) { fields.remove(at: index) }
                index -= 1
            }
        } else {
            add(name: name, value: value)
        }
    }

    /// Removes every line named `name`.
    public mutating func remove(name: String) {
        fields.removeAll { Self.nameMatches($0.name, name) }
    }

    /// The value of the first line named `name`.
    public subscript(name: String) -> String? {
        for field in fields where Self.nameMatches(field.name, name) {
            return field.value
        }
        return nil
    }

    /// The values of every line named `name`, in order.
    public func values(for name: String) -> [String] {
        fields.compactMap { Self.nameMatches($0.name, name) ? $0.value : nil }
    }

    public func contains(name: String) -> Bool {
        fields.contains { Self.nameMatches($0.name, name) }
    }

    /// True if any comma-separated element of any `name` line equals `token` case-insensitively,
    /// e.g. `containsToken("close", in: "connection")` (RFC 9110 §5.6.1 list syntax, OWS trimmed).
    public func containsToken(_ token: String, in name: String) -> Bool {
        for field in fields where Self.nameMatches(field.name, name) {
            if Self.listContains(field.value, token: token) { return true }
        }
        return false
    }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}

extension HTTPHeaders {
    /// Appends a line whose name the caller has already lowercased (the parser, hot response paths).
    public mutating func appendLowercased(name: String, value: String) {
        fields.append((name: name, value: value))
    }

    public mutating func reserveCapacity(_ capacity: Int) {
        fields.reserveCapacity(capacity)
    }

    @inline(__always)
    static func lowerASCII(_ byte: UInt8) -> UInt8 {
        byte &- 0x41 < 26 ? byte | 0x20 : byte
    }

    static func lowercased(_ name: String) -> String {
        if !name.utf8.contains(where: { $0 &- 0x41 < 26 }) { return name }
        return String(decoding: name.utf8.map(lowerASCII), as: UTF8.self)
    }

    /// `stored` is already lowercase; `query` may have any ASCII case. No allocation.
    static func nameMatches(_ stored: String, _ query: String) -> Bool {
        let a = stored.utf8
        let b = query.utf8
        guard a.count == b.count else { return false }
        return zip(a, b).allSatisfy { $0 == lowerASCII($1) }
    }

    /// Whether the comma-separated list `value` has an element equal to `token`, ASCII case-insensitively.
    static func listContains(_ value: String, token: String) -> Bool {
        var value = value
        var token = token
        return value.withUTF8 { bytes in
            token.withUTF8 { tokenBytes in listContains(bytes, token: tokenBytes) }
        }
    }

    static func listContains(_ bytes: UnsafeBufferPointer<UInt8>, token: UnsafeBufferPointer<UInt8>) -> Bool {
        var found = false
        HTTPRequestParser.forEachListElement(bytes) { element in
            guard !found, element.count == token.count else { return }
            found = zip(element, token).allSatisfy { lowerASCII($0) == lowerASCII($1) }
        }
        return found
    }
}
