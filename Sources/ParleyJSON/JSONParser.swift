extension JSONValue {
    /// Nesting limit used when the caller gives none: deep enough for any real payload, shallow
    /// enough that comparing, writing and destroying a parsed value stays cheap.
    public static let defaultMaxDepth = 64

    /// Parses one complete RFC 8259 document, strictly: no comments, trailing commas, NaN,
    /// leading zeros, invalid UTF-8, lone surrogates or duplicate keys, and nothing but whitespace
    /// after the value. Arrays and objects may nest `maxDepth` levels deep.
    public static func parse(
        _ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = defaultMaxDepth
    ) throws(JSONParseError) -> JSONValue {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { throw .emptyInput(at: 0) }
        var parser = JSONParser(base: base, count: bytes.count, maxDepth: maxDepth)
        return try parser.parseDocument()
    }

    /// Parses one complete document; see `parse(_:maxDepth:)` for the rules.
    public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { buffer throws(JSONParseError) in
            try parse(buffer, maxDepth: maxDepth)
        }
    }

    /// Parses one complete document from the UTF-8 of `text`; offsets in errors are UTF-8 offsets.
    public static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        var text = text
        let result = text.withUTF8 { buffer in
            Result { () throws(JSONParseError) in try parse(buffer, maxDepth: maxDepth) }
        }
        return try result.get()
    }
}

/// The parser: one pass over the bytes with an explicit stack of open containers instead of
/// recursion, so nesting is bounded by `maxDepth` and never by the thread's stack.
///
/// Finished values wait on `values` (and object keys on `keys`) until their container closes,
/// then move into it in one step.
struct JSONParser: ~Copyable {
    let base: UnsafePointer<UInt8>
    let end: Int
    let maxDepth: Int
    var position = 0
    var frames: [Frame] = []
    var values = MoveStack<JSONValue>(capacity: 32)
    var keys = MoveStack<String>(capacity: 16)
    /// Reused for strings with escapes, the only ones that cannot be built straight from the input.
    var scratch: [UInt8] = []

    /// An open array or object.
    struct Frame {
        var isObject: Bool
        var valueStart: Int
        var keyStart: Int
        /// Key -> position for objects past `JSONObject.indexThreshold` members, so duplicate
        /// detection stays linear for huge objects; handed to the finished `JSONObject`.
        var index: [String: Int]?
    }

    init(base: UnsafePointer<UInt8>, count: Int, maxDepth: Int) {
        self.base = base
        self.end = count
        self.maxDepth = max(maxDepth, 0)
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        guard position < end else { throw .emptyInput(at: position) }
        let value = try parseValue()
        skipWhitespace()
        guard position == end else { throw .trailingCharacters(at: position) }
        return value
    }

    /// Parses one value with everything nested in it.
    private mutating func parseValue() throws(JSONParseError) -> JSONValue {
        nextValue: while true {
            skipWhitespace()
            guard position < end else { throw .unexpectedEnd(at: position) }
            var value: JSONValue
            switch base[position] {
            case UInt8(ascii: "{"):
                try checkDepth()
                position += 1
                skipWhitespace()
                if position < end, base[position] == UInt8(ascii: "}") {
                    position += 1
                    value = .object(JSONObject())
                } else {
                    frames.append(Frame(isObject: true, valueStart: values.count, keyStart: keys.count, index: nil))
                    try parseKey()
                    continue nextValue
                }
            case UInt8(ascii: "["):
                try checkDepth()
                position += 1
                skipWhitespace()
                if position < end, base[position] == UInt8(ascii: "]") {
                    position += 1
                    value = .array([])
                } else {
                    frames.append(Frame(isObject: false, valueStart: values.count, keyStart: keys.count, index: nil))
                    continue nextValue
                }
            case UInt8(ascii: "\""):
                value = .string(try parseString())
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                value = .number(try parseNumber())
            case UInt8(ascii: "t"):
                try expectLiteral(0x74_72_75_65, length: 4) // "true"
                value = .bool(true)
            case UInt8(ascii: "f"):
                try expectLiteral(0x66_61_6C_73_65, length: 5) // "false"
                value = .bool(false)
            case UInt8(ascii: "n"):
                try expectLiteral(0x6E_75_6C_6C, length: 4) // "null"
                value = .null
            default:
                throw .unexpectedCharacter(at: position)
            }

            // Hand the finished value to its container, closing every container that ends here.
            // Only `isObject` is read: a copy of the frame would share its key index and make
            // every insertion into it copy the whole dictionary.
            while !frames.isEmpty {
                let isObject = frames[frames.count - 1].isObject
                values.push(consume value)
                skipWhitespace()
                guard position < end else { throw .unexpectedEnd(at: position) }
                let byte = base[position]
                if byte == UInt8(ascii: ",") {
                    position += 1
                    if isObject {
                        skipWhitespace()
                        try parseKey()
                    }
                    continue nextValue
                }
                if isObject {
                    guard byte == UInt8(ascii: "}") else { throw .expectedCommaOrBrace(at: position) }
                    position += 1
                    value = closeObject()
                } else {
                    guard byte == UInt8(ascii: "]") else { throw .expectedCommaOrBracket(at: position) }
                    position += 1
                    value = .array(values.popArray(from: frames.removeLast().valueStart))
                }
            }
            return value
        }
    }

    @inline(__always)
    private func checkDepth() throws(JSONParseError) {
        guard frames.count < maxDepth else { throw .tooDeep(at: position, maxDepth: maxDepth) }
    }

    /// Parses `"key" :` inside the innermost object, rejecting a key the object already has.
    private mutating func parseKey() throws(JSONParseError) {
        guard position < end else { throw .unexpectedEnd(at: position) }
        guard base[position] == UInt8(ascii: "\"") else { throw .expectedKey(at: position) }
        let keyOffset = position
        let key = try parseString()

        let top = frames.count - 1
        let keyStart = frames[top].keyStart
        let existing = keys.count - keyStart
        if existing < JSONObject.indexThreshold {
            let duplicate = keys.withElements(from: keyStart) { $0.contains(key) }
            if duplicate { throw .duplicateKey(key, at: keyOffset) }
        } else {
            if frames[top].index == nil {
                frames[top].index = keys.withElements(from: keyStart) { existingKeys in
                    var index: [String: Int] = [:]
                    index.reserveCapacity(existingKeys.count * 2)
                    for (position, key) in existingKeys.enumerated() { index[key] = position }
                    return index
                }
            }
            if frames[top].index!.updateValue(existing, forKey: key) != nil {
                throw .duplicateKey(key, at: keyOffset)
            }
        }
        keys.push(key)

        skipWhitespace()
        guard position < end else { throw .unexpectedEnd(at: position) }
        guard base[position] == UInt8(ascii: ":") else { throw .expectedColon(at: position) }
        position += 1
    }

    private mutating func closeObject() -> JSONValue {
        let frame = frames.removeLast()
        let count = values.count - frame.valueStart
        let entries = [JSONObject.Member](unsafeUninitializedCapacity: count) { buffer, initialized in
            for offset in 0..<count {
                buffer.initializeElement(
                    at: offset,
                    to: JSONObject.Member(
                        key: keys.take(frame.keyStart + offset),
                        value: values.take(frame.valueStart + offset)))
            }
            initialized = count
        }
        keys.discardMoved(from: frame.keyStart)
        values.discardMoved(from: frame.valueStart)
        return .object(JSONObject(uniqueEntries: entries, index: frame.index))
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSONNumber {
        let start = position
        var scanned = position
        if let failure = JSONNumber.scan(UnsafeBufferPointer(start: base, count: end), from: &scanned) {
            switch failure {
            case .invalid(let offset): throw .invalidNumber(at: offset)
            case .leadingZero(let offset): throw .leadingZero(at: offset)
            }
        }
        position = scanned
        return JSONNumber(
            uncheckedText: String(
                decoding: UnsafeBufferPointer(start: base + start, count: scanned - start),
                as: UTF8.self))
    }

    /// Matches `true`, `false` or `null`, given as big-endian ASCII packed into an integer.
    private mutating func expectLiteral(_ packed: UInt64, length: Int) throws(JSONParseError) {
        guard end - position >= length else { throw .invalidLiteral(at: position) }
        var actual: UInt64 = 0
        for offset in 0..<length { actual = actual << 8 | UInt64(base[position + offset]) }
        guard actual == packed else { throw .invalidLiteral(at: position) }
        position += length
    }

    /// RFC 8259 §2: whitespace is space, tab, line feed and carriage return, nothing else.
    @inline(__always)
    mutating func skipWhitespace() {
        while position < end {
            let byte = base[position]
            guard byte <= 0x20,
                byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
            else { return }
            position += 1
        }
    }
}
