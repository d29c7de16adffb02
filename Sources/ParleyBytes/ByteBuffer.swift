/// A growable byte buffer for per-request serialisation (log lines, response heads). Appends are inlined
/// pointer writes: no copy-on-write check, no generic `append(contentsOf:)` per piece, which cost more than the
/// bytes themselves on the request path (callgrind, scripts/profile-http). Not copyable: one owner, freed on
/// deinit.
public struct ByteBuffer: ~Copyable {
    @usableFromInline var base: UnsafeMutablePointer<UInt8>
    @usableFromInline var used: Int
    @usableFromInline var capacity: Int

    public init(capacity: Int = 256) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
        used = 0
    }

    deinit { base.deallocate() }

    public var count: Int { used }
    public var isEmpty: Bool { used == 0 }

    @inlinable @inline(__always)
    public mutating func reserve(_ additional: Int) {
        if used + additional > capacity { grow(to: used + additional) }
    }

    @usableFromInline
    mutating func grow(to minimum: Int) {
        var newCapacity = capacity * 2
        while newCapacity < minimum { newCapacity *= 2 }
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: used)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inlinable @inline(__always)
    public mutating func append(_ byte: UInt8) {
        if used == capacity { grow(to: used + 1) }
        base[used] = byte
        used &+= 1
    }

    @inlinable @inline(__always)
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        UnsafeMutableRawPointer(base + used).copyMemory(from: source, byteCount: bytes.count)
        used &+= bytes.count
    }

    @inlinable
    public mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        append(UnsafeRawBufferPointer(bytes))
    }

    @inlinable @inline(__always)
    public mutating func append(_ literal: StaticString) {
        append(UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// `,"key":` (or `"key":` without `comma`): a JSON object member's name, in one capacity check (log lines
    /// write a dozen per line).
    @inlinable @inline(__always)
    public mutating func appendMemberName(_ key: StaticString, comma: Bool) {
        let length = key.utf8CodeUnitCount
        reserve(length + 4)
        var at = used
        if comma {
            base[at] = UInt8(ascii: ",")
            at &+= 1
        }
        base[at] = UInt8(ascii: "\"")
        (base + at + 1).update(from: key.utf8Start, count: length)
        at &+= 1 &+ length
        base[at] = UInt8(ascii: "\"")
        base[at &+ 1] = UInt8(ascii: ":")
        used = at &+ 2
    }

    @inlinable
    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// The string's UTF-8 bytes, unescaped.
    @inlinable
    public mutating func append(_ string: String) {
        var string = string
        string.withUTF8 { append($0) }
    }

    /// Appends another buffer's bytes.
    @inlinable
    public mutating func append(_ other: borrowing ByteBuffer) {
        append(UnsafeRawBufferPointer(start: other.base, count: other.used))
    }

    /// The decimal digits of `value`, with a leading `-` when negative; no intermediate String.
    public mutating func appendDecimal(_ value: Int) {
        DecimalASCII.append(value, to: &self)
    }

    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: base, count: used))
    }

    /// The bytes as an array (one copy).
    public var array: [UInt8] { Array(UnsafeBufferPointer(start: base, count: used)) }

    /// Empties the buffer; a buffer that grew past `keepCapacityUpTo` gives its memory back.
    public mutating func removeAll(keepCapacityUpTo limit: Int = .max) {
        used = 0
        if capacity > limit {
            base.deallocate()
            capacity = max(limit, 16)
            base = .allocate(capacity: capacity)
        }
    }
}

/// One owner at a time (not copyable), so handing a buffer to another thread shares nothing.
extension ByteBuffer: @unchecked Sendable {}
