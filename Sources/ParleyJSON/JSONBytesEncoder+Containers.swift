import Foundation

/// The `Encoder` handed to `encode(to:)`: a node of the state's tree.
struct JSONBytesEncoderImpl: Encoder {
    let state: JSONBytesEncoderState
    let node: Int

    var codingPath: [any CodingKey] { state.codingPath(of: node) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        state.makeContainer(node, kind: .object)
        return KeyedEncodingContainer(JSONBytesKeyedContainer<Key>(state: state, node: node))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        state.makeContainer(node, kind: .array)
        return JSONBytesUnkeyedContainer(state: state, node: node)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        JSONBytesSingleValueContainer(state: state, node: node)
    }
}

struct JSONBytesKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let state: JSONBytesEncoderState
    let node: Int

    var codingPath: [any CodingKey] { state.codingPath(of: node) }

    private func path(_ key: Key) -> [any CodingKey] { codingPath + [key] }

    mutating func encodeNil(forKey key: Key) throws { state.writeNull(state.member(of: node, key: key)) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { state.write(value, state.member(of: node, key: key)) }
    mutating func encode(_ value: String, forKey key: Key) throws {
        state.write(value, state.member(of: node, key: key))
    }

    mutating func encode(_ value: Double, forKey key: Key) throws {
        guard value.isFinite else { return try state.write(value, -1, path: path(key)) }
        try state.write(value, state.member(of: node, key: key), path: [])
    }

    mutating func encode(_ value: Float, forKey key: Key) throws {
        guard value.isFinite else { return try state.write(value, -1, path: path(key)) }
        try state.write(value, state.member(of: node, key: key), path: [])
    }

    mutating func encode(_ value: Int, forKey key: Key) throws { state.write(value, state.member(of: node, key: key)) }
    mutating func encode(_ value: Int8, forKey key: Key) throws {
        state.write(Int(value), state.member(of: node, key: key))
    }
    mutating func encode(_ value: Int16, forKey key: Key) throws {
        state.write(Int(value), state.member(of: node, key: key))
    }
    mutating func encode(_ value: Int32, forKey key: Key) throws {
        state.write(Int(value), state.member(of: node, key: key))
    }
    mutating func encode(_ value: Int64, forKey key: Key) throws {
        state.write(Int(value), state.member(of: node, key: key))
    }
    mutating func encode(_ value: UInt, forKey key: Key) throws {
        state.write(UInt64(value), state.member(of: node, key: key))
    }
    mutating func encode(_ value: UInt8, forKey key: Key) throws {
        state.write(Int(value), state.member(of: node, key: key))
    }
    mutating func encode(_ value: UInt16, forKey key: Key) throws {
        state.write(Int(value), state.member(of: node, key: key))
    }
    mutating func encode(_ value: UInt32, forKey key: Key) throws {
        state.write(Int(value), state.member(of: node, key: key))
    }
    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        state.write(value, state.member(of: node, key: key))
    }

    mutating func encode(_ value: Int128, forKey key: Key) throws {
        state.writeDescription(value, state.member(of: node, key: key))
    }

    mutating func encode(_ value: UInt128, forKey key: Key) throws {
        state.writeDescription(value, state.member(of: node, key: key))
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try state.encodeValue(value, at: state.member(of: node, key: key))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let child = state.containerMember(of: node, key: key, kind: .object)
        return KeyedEncodingContainer(JSONBytesKeyedContainer<NestedKey>(state: state, node: child))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = state.containerMember(of: node, key: key, kind: .array)
        return JSONBytesUnkeyedContainer(state: state, node: child)
    }

    mutating func superEncoder() -> any Encoder {
        JSONBytesEncoderImpl(state: state, node: state.member(of: node, key: JSONBytesCodingKey(stringValue: "super")))
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        JSONBytesEncoderImpl(state: state, node: state.member(of: node, key: key))
    }
}

struct JSONBytesUnkeyedContainer: UnkeyedEncodingContainer {
    let state: JSONBytesEncoderState
    let node: Int

    var codingPath: [any CodingKey] { state.codingPath(of: node) }
    var count: Int { state.nodes[node].count }

    private var nextPath: [any CodingKey] { codingPath + [JSONBytesCodingKey(index: count)] }

    mutating func encodeNil() throws { state.writeNull(state.element(of: node)) }
    mutating func encode(_ value: Bool) throws { state.write(value, state.element(of: node)) }
    mutating func encode(_ value: String) throws { state.write(value, state.element(of: node)) }

    mutating func encode(_ value: Double) throws {
        guard value.isFinite else { return try state.write(value, -1, path: nextPath) }
        try state.write(value, state.element(of: node), path: [])
    }

    mutating func encode(_ value: Float) throws {
        guard value.isFinite else { return try state.write(value, -1, path: nextPath) }
        try state.write(value, state.element(of: node), path: [])
    }

    mutating func encode(_ value: Int) throws { state.write(value, state.element(of: node)) }
    mutating func encode(_ value: Int8) throws { state.write(Int(value), state.element(of: node)) }
    mutating func encode(_ value: Int16) throws { state.write(Int(value), state.element(of: node)) }
    mutating func encode(_ value: Int32) throws { state.write(Int(value), state.element(of: node)) }
    mutating func encode(_ value: Int64) throws { state.write(Int(value), state.element(of: node)) }
    mutating func encode(_ value: UInt) throws { state.write(UInt64(value), state.element(of: node)) }
    mutating func encode(_ value: UInt8) throws { state.write(Int(value), state.element(of: node)) }
    mutating func encode(_ value: UInt16) throws { state.write(Int(value), state.element(of: node)) }
    mutating func encode(_ value: UInt32) throws { state.write(Int(value), state.element(of: node)) }
    mutating func encode(_ value: UInt64) throws { state.write(value, state.element(of: node)) }
    mutating func encode(_ value: Int128) throws { state.writeDescription(value, state.element(of: node)) }
    mutating func encode(_ value: UInt128) throws { state.writeDescription(value, state.element(of: node)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try state.encodeValue(value, at: state.element(of: node))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        let child = state.element(of: node)
        state.makeContainer(child, kind: .object)
        return KeyedEncodingContainer(JSONBytesKeyedContainer<NestedKey>(state: state, node: child))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let child = state.element(of: node)
        state.makeContainer(child, kind: .array)
        return JSONBytesUnkeyedContainer(state: state, node: child)
    }

    mutating func superEncoder() -> any Encoder {
        JSONBytesEncoderImpl(state: state, node: state.element(of: node))
    }
}

struct JSONBytesSingleValueContainer: SingleValueEncodingContainer {
    let state: JSONBytesEncoderState
    let node: Int

    var codingPath: [any CodingKey] { state.codingPath(of: node) }

    mutating func encodeNil() throws { state.writeNull(node) }
    mutating func encode(_ value: Bool) throws { state.write(value, node) }
    mutating func encode(_ value: String) throws { state.write(value, node) }
    mutating func encode(_ value: Double) throws { try state.write(value, node, path: codingPath) }
    mutating func encode(_ value: Float) throws { try state.write(value, node, path: codingPath) }
    mutating func encode(_ value: Int) throws { state.write(value, node) }
    mutating func encode(_ value: Int8) throws { state.write(Int(value), node) }
    mutating func encode(_ value: Int16) throws { state.write(Int(value), node) }
    mutating func encode(_ value: Int32) throws { state.write(Int(value), node) }
    mutating func encode(_ value: Int64) throws { state.write(Int(value), node) }
    mutating func encode(_ value: UInt) throws { state.write(UInt64(value), node) }
    mutating func encode(_ value: UInt8) throws { state.write(Int(value), node) }
    mutating func encode(_ value: UInt16) throws { state.write(Int(value), node) }
    mutating func encode(_ value: UInt32) throws { state.write(Int(value), node) }
    mutating func encode(_ value: UInt64) throws { state.write(value, node) }
    mutating func encode(_ value: Int128) throws { state.writeDescription(value, node) }
    mutating func encode(_ value: UInt128) throws { state.writeDescription(value, node) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try state.encodeValue(value, at: node)
    }
}
