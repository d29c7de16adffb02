import Foundation
import ParleyBytes

/// An `Encoder` writing JSON bytes, byte for byte what Foundation's `JSONEncoder` writes with
/// `outputFormatting = [.sortedKeys, .withoutEscapingSlashes]` and the default data, float and key strategies,
/// except for `JSONValue`, which is written as it is kept (`JSONValue.write(to:)`: members in stored order, numbers as
/// their text) where Foundation would sort its members and pass its numbers through `Int64`/`Double`:
///
/// - object members sorted by the UTF-8 bytes of their keys (what Foundation's `.sortedKeys` does on Linux);
///   a key written twice keeps its first spelling and its last value, keys equal as Swift strings (canonically
///   equivalent) count as the same key, as in Foundation's `[String: _]` storage;
/// - numbers as their Swift `description`, a trailing `.0` dropped (`3`, `1e-07`, `1e+21`, `-0`);
///   non-finite floats throw `EncodingError.invalidValue`;
/// - strings escape `"`, `\` and U+0000...U+001F only (`\b \f \n \r \t` short, the rest `\u00xx`);
/// - `Data` as base64, `URL` as its `absoluteString`, `Decimal` as its `description`, `Date` through `dateWriter`
///   (its own `encode(to:)`, Foundation's `.deferredToDate`, when nil);
/// - a container nothing was written to is `{}`, a top-level value that writes nothing throws.
///
/// Values are collected into a flat tree (an array of nodes, scalars already as JSON bytes in one byte pool), then
/// written out with each object's members sorted, only when they were not already in order.
public struct JSONBytesEncoder: Sendable {
    /// Appends a date's JSON (quotes included, when a string) to the output.
    public typealias DateWriter = @Sendable (Date, inout [UInt8]) throws -> Void

    public var dateWriter: DateWriter?

    public init(dateWriter: DateWriter? = nil) {
        self.dateWriter = dateWriter
    }

    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        var out: [UInt8] = []
        try encode(value, into: &out)
        return out
    }

    /// Appends the JSON of `value` to `out`; on a throw `out` is left as it was.
    public func encode<T: Encodable>(_ value: T, into out: inout [UInt8]) throws {
        let state = JSONBytesEncoderState(dateWriter: dateWriter)
        try state.encodeValue(value, at: 0)
        guard state.nodes[0].kind != .empty else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: [], debugDescription: "Top-level \(T.self) did not encode any values."))
        }
        state.write(to: &out)
    }
}

/// A coding key rebuilt for `codingPath`.
struct JSONBytesCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    init(intValue: Int) {
        self.stringValue = "\(intValue)"
        self.intValue = intValue
    }

    init(stringValue: String, intValue: Int?) {
        self.stringValue = stringValue
        self.intValue = intValue
    }

    init(index: Int) {
        self.stringValue = "Index \(index)"
        self.intValue = index
    }
}

final class JSONBytesEncoderState {
    enum Kind: UInt8 { case empty, scalar, array, object }
    enum KeyKind: UInt8 { case none, key, index }

    struct Node {
        var kind: Kind = .empty
        var keyKind: KeyKind = .none
        /// Scalar: its JSON bytes in `pool`.
        var start = 0
        var end = 0
        /// Object member: its key's raw UTF-8 in `pool`.
        var keyStart = 0
        var keyEnd = 0
        /// The key's `intValue`, or the element's index.
        var keyInt = 0
        var hasKeyInt = false
        var first = -1
        var last = -1
        var count = 0
        var next = -1
        var parent = -1
    }

    var nodes: [Node]
    var pool: [UInt8]
    let dateWriter: JSONBytesEncoder.DateWriter?

    init(dateWriter: JSONBytesEncoder.DateWriter?) {
        self.dateWriter = dateWriter
        nodes = []
        nodes.reserveCapacity(8)
        nodes.append(Node())
        pool = []
        pool.reserveCapacity(64)
    }

    // MARK: Tree

    @inline(__always)
    private func link(_ child: Int, to parent: Int) {
        let last = nodes[parent].last
        if last >= 0 { nodes[last].next = child } else { nodes[parent].first = child }
        nodes[parent].last = child
        nodes[parent].count += 1
    }

    /// A new member of object `parent` (its value still empty).
    func member<K: CodingKey>(of parent: Int, key: K) -> Int {
        var node = Node()
        node.keyKind = .key
        node.parent = parent
        node.keyStart = pool.count
        var string = key.stringValue
        string.withUTF8 { pool.append(contentsOf: $0) }
        node.keyEnd = pool.count
        if let int = key.intValue {
            node.keyInt = int
            node.hasKeyInt = true
        }
        let index = nodes.count
        nodes.append(node)
        link(index, to: parent)
        return index
    }

    /// The member `key` of `parent` if it already holds a container of `kind`, else a new member: a second
    /// `nestedContainer(forKey:)` for one key adds to the same container, as in JSONEncoder.
    func containerMember<K: CodingKey>(of parent: Int, key: K, kind: Kind) -> Int {
        var string = key.stringValue
        let found: Int? = string.withUTF8 { wanted in
            var child = nodes[parent].first
            var match: Int?
            while child >= 0 {
                let node = nodes[child]
                if node.kind == kind, node.keyEnd - node.keyStart == wanted.count,
                    pool[node.keyStart..<node.keyEnd].elementsEqual(wanted)
                {
                    match = child
                }
                child = node.next
            }
            return match
        }
        if let found { return found }
        let index = member(of: parent, key: key)
        nodes[index].kind = kind
        return index
    }

    /// A new element of array `parent`.
    func element(of parent: Int) -> Int {
        var node = Node()
        node.keyKind = .index
        node.parent = parent
        node.keyInt = nodes[parent].count
        node.hasKeyInt = true
        let index = nodes.count
        nodes.append(node)
        link(index, to: parent)
        return index
    }

    /// Makes `node` a container of `kind`; asking again for the same kind reuses it (JSONEncoder's behaviour, e.g. a
    /// subclass and its superclass both calling `container(keyedBy:)` on one encoder).
    func makeContainer(_ node: Int, kind: Kind) {
        if nodes[node].kind == kind { return }
        nodes[node].kind = kind
        nodes[node].first = -1
        nodes[node].last = -1
        nodes[node].count = 0
    }

    func codingPath(of node: Int) -> [any CodingKey] {
        var keys: [any CodingKey] = []
        var current = node
        while current >= 0, nodes[current].keyKind != .none {
            let n = nodes[current]
            if n.keyKind == .index {
                keys.append(JSONBytesCodingKey(index: n.keyInt))
            } else {
                let string = String(decoding: pool[n.keyStart..<n.keyEnd], as: UTF8.self)
                keys.append(JSONBytesCodingKey(stringValue: string, intValue: n.hasKeyInt ? n.keyInt : nil))
            }
            current = n.parent
        }
        return keys.reversed()
    }

    // MARK: Scalars

    @inline(__always)
    func beginScalar(_ node: Int) -> Int {
        nodes[node].kind = .scalar
        nodes[node].first = -1
        nodes[node].last = -1
        nodes[node].count = 0
        return pool.count
    }

    @inline(__always)
    func endScalar(_ node: Int, start: Int) {
        nodes[node].start = start
        nodes[node].end = pool.count
    }

    func writeNull(_ node: Int) {
        let start = beginScalar(node)
        pool.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C]) // null
        endScalar(node, start: start)
    }

    func write(_ value: Bool, _ node: Int) {
        let start = beginScalar(node)
        if value {
            pool.append(contentsOf: [0x74, 0x72, 0x75, 0x65])
        } else {
            pool.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65])
        }
        endScalar(node, start: start)
    }

    func write(_ value: String, _ node: Int) {
        let start = beginScalar(node)
        JSONString.append(value, to: &pool)
        endScalar(node, start: start)
    }

    func write(_ value: Int, _ node: Int) {
        let start = beginScalar(node)
        DecimalASCII.append(value, to: &pool)
        endScalar(node, start: start)
    }

    func write(_ value: UInt64, _ node: Int) {
        let start = beginScalar(node)
        if value <= UInt64(Int.max) {
            DecimalASCII.append(Int(value), to: &pool)
        } else {
            pool.append(contentsOf: String(value).utf8)
        }
        endScalar(node, start: start)
    }

    func writeDescription<T: CustomStringConvertible>(_ value: T, _ node: Int) {
        let start = beginScalar(node)
        pool.append(contentsOf: value.description.utf8)
        endScalar(node, start: start)
    }

    /// `description` without a trailing `.0`, as JSONEncoder writes floats (Double and Float).
    func write<F: BinaryFloatingPoint & CustomStringConvertible>(
        _ value: F, _ node: Int,
        path: @autoclosure () -> [any CodingKey]
    ) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: path(), debugDescription: "Unable to encode \(F.self).\(value) directly in JSON."))
        }
        let start = beginScalar(node)
        appendFloatText(value.description)
        endScalar(node, start: start)
    }

    @inline(__always)
    private func appendFloatText(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var count = bytes.count
            if count >= 2, bytes[count - 1] == UInt8(ascii: "0"), bytes[count - 2] == UInt8(ascii: ".") { count -= 2 }
            pool.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[0..<count]))
        }
    }

    /// Any value: the JSON scalars and Foundation's special types directly, everything else through its
    /// `encode(to:)`.
    func encodeValue<T: Encodable>(_ value: T, at node: Int) throws {
        if T.self == String.self {
            write(value as! String, node)
        } else if T.self == Int.self {
            write(value as! Int, node)
        } else if T.self == Bool.self {
            write(value as! Bool, node)
        } else if T.self == Double.self {
            try write(value as! Double, node, path: self.codingPath(of: node))
        } else if T.self == JSONValue.self {
            // Free-form JSON (message content) goes out as it is kept: members in their order, numbers as their
            // text, so no digit is lost to a Double and every path writes the same bytes for it.
            let start = beginScalar(node)
            (value as! JSONValue).write(to: &pool)
            endScalar(node, start: start)
        } else if T.self == Date.self {
            if let dateWriter {
                let start = beginScalar(node)
                try dateWriter(value as! Date, &pool)
                endScalar(node, start: start)
            } else {
                try value.encode(to: JSONBytesEncoderImpl(state: self, node: node))
            }
        } else if T.self == Data.self {
            write((value as! Data).base64EncodedString(), node)
        } else if T.self == URL.self {
            write((value as! URL).absoluteString, node)
        } else if T.self == Decimal.self {
            writeDescription(value as! Decimal, node)
        } else {
            try value.encode(to: JSONBytesEncoderImpl(state: self, node: node))
        }
    }

    // MARK: Output

    func write(to out: inout [UInt8]) {
        out.reserveCapacity(out.count &+ pool.count &+ nodes.count &* 4)
        nodes.withUnsafeBufferPointer { nodes in
            pool.withUnsafeBufferPointer { pool in
                var writer = JSONBytesTreeWriter(nodes: nodes, pool: pool)
                writer.write(0, to: &out)
            }
        }
    }
}

/// Writes the collected tree, sorting object members.
struct JSONBytesTreeWriter {
    typealias Node = JSONBytesEncoderState.Node
    let nodes: UnsafeBufferPointer<Node>
    let pool: UnsafeBufferPointer<UInt8>
    var scratch: [Int] = []

    init(nodes: UnsafeBufferPointer<Node>, pool: UnsafeBufferPointer<UInt8>) {
        self.nodes = nodes
        self.pool = pool
    }

    @inline(__always)
    private func bytes(_ start: Int, _ end: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: pool[start..<end])
    }

    /// Compares two members' keys by UTF-8 bytes; ties by insertion order.
    @inline(__always)
    func keyPrecedes(_ a: Int, _ b: Int) -> Bool {
        let order = compareKeys(a, b)
        return order != 0 ? order < 0 : a < b
    }

    @inline(__always)
    private func compareKeys(_ a: Int, _ b: Int) -> Int {
        let na = nodes[a], nb = nodes[b]
        let la = na.keyEnd - na.keyStart, lb = nb.keyEnd - nb.keyStart
        let common = min(la, lb)
        if common > 0 {
            let c = memcmp(pool.baseAddress! + na.keyStart, pool.baseAddress! + nb.keyStart, common)
            if c != 0 { return Int(c) }
        }
        return la - lb
    }

    mutating func write(_ index: Int, to out: inout [UInt8]) {
        let node = nodes[index]
        switch node.kind {
        case .empty:
            out.append(UInt8(ascii: "{"))
            out.append(UInt8(ascii: "}"))
        case .scalar:
            out.append(contentsOf: bytes(node.start, node.end))
        case .array:
            out.append(UInt8(ascii: "["))
            var child = node.first
            var firstElement = true
            while child >= 0 {
                if !firstElement { out.append(UInt8(ascii: ",")) }
                firstElement = false
                write(child, to: &out)
                child = nodes[child].next
            }
            out.append(UInt8(ascii: "]"))
        case .object:
            writeObject(node, to: &out)
        }
    }

    @inline(__always)
    private mutating func writeMember(key: Int, value: Int, comma: Bool, to out: inout [UInt8]) {
        if comma { out.append(UInt8(ascii: ",")) }
        out.append(UInt8(ascii: "\""))
        JSONString.appendEscaped(bytes(nodes[key].keyStart, nodes[key].keyEnd), to: &out)
        out.append(UInt8(ascii: "\""))
        out.append(UInt8(ascii: ":"))
        write(value, to: &out)
    }

    private mutating func writeObject(_ node: Node, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        // Common case: members already in strictly ascending order, all keys ASCII. No copy, no sort.
        var inOrder = true
        var ascii = true
        var child = node.first
        var previous = -1
        while child >= 0 {
            if previous >= 0, compareKeys(previous, child) >= 0 { inOrder = false }
            if ascii {
                let n = nodes[child]
                for byte in bytes(n.keyStart, n.keyEnd) where byte >= 0x80 {
                    ascii = false
                    break
                }
            }
            previous = child
            child = nodes[child].next
        }
        if inOrder && ascii {
            child = node.first
            var comma = false
            while child >= 0 {
                writeMember(key: child, value: child, comma: comma, to: &out)
                comma = true
                child = nodes[child].next
            }
        } else if ascii {
            let base = scratch.count
            child = node.first
            while child >= 0 {
                scratch.append(child)
                child = nodes[child].next
            }
            let end = scratch.count
            let sorter = JSONBytesTreeWriter(nodes: nodes, pool: pool)
            scratch[base..<end].sort { sorter.keyPrecedes($0, $1) }
            var comma = false
            for position in base..<end {
                let member = scratch[position]
                // A key written twice: the last one written wins (ties are sorted by insertion order).
                if position + 1 < end, compareKeys(member, scratch[position + 1]) == 0 { continue }
                writeMember(key: member, value: member, comma: comma, to: &out)
                comma = true
            }
            scratch.removeLast(end - base)
        } else {
            writeObjectUnicodeKeys(node, to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// Non-ASCII keys: duplicates are keys equal as Swift strings (canonical equivalence), as in JSONEncoder's
    /// dictionary; the first spelling stays, with the last value.
    private mutating func writeObjectUnicodeKeys(_ node: Node, to out: inout [UInt8]) {
        var entries: [(key: Int, value: Int)] = []
        var positions: [String: Int] = [:]
        var child = node.first
        while child >= 0 {
            let key = String(decoding: bytes(nodes[child].keyStart, nodes[child].keyEnd), as: UTF8.self)
            if let position = positions[key] {
                entries[position].value = child
            } else {
                positions[key] = entries.count
                entries.append((child, child))
            }
            child = nodes[child].next
        }
        entries.sort { keyPrecedes($0.key, $1.key) }
        var comma = false
        for entry in entries {
            writeMember(key: entry.key, value: entry.value, comma: comma, to: &out)
            comma = true
        }
    }
}
