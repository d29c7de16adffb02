/// A JSON value (RFC 8259).
///
/// Numbers keep their text (`JSONNumber`) so 64-bit ids round-trip exactly, and objects keep their
/// keys in input order (`JSONObject`). Parse with `JSONValue.parse(_:maxDepth:)`, write with
/// `serialized()` or `write(to:)`.
///
/// Deeply nested values are compared, hashed, written and destroyed recursively, which is why the
/// parser bounds nesting (`defaultMaxDepth`): keep `maxDepth` in the hundreds, not the millions.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

extension JSONValue {
    /// True for `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The string, or nil for any other kind of value.
    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    /// The boolean, or nil for any other kind of value.
    public var boolValue: Bool? {
        if case .bool(let bool) = self { return bool }
        return nil
    }

    /// The number, or nil for any other kind of value.
    public var numberValue: JSONNumber? {
        if case .number(let number) = self { return number }
        return nil
    }

    /// The number as an exact `Int64` (see `JSONNumber.int64Value`); nil for non-integral numbers,
    /// numbers out of range and any other kind of value.
    public var int64Value: Int64? {
        numberValue?.int64Value
    }

    /// The number as the nearest `Double`, or nil for any other kind of value.
    public var doubleValue: Double? {
        numberValue?.doubleValue
    }

    /// The elements, or nil for any other kind of value.
    public var arrayValue: [JSONValue]? {
        if case .array(let array) = self { return array }
        return nil
    }

    /// The object, or nil for any other kind of value.
    public var objectValue: JSONObject? {
        if case .object(let object) = self { return object }
        return nil
    }

    /// The member named `key` of an object; nil when absent or when this is not an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The element at `index` of an array; nil when out of range or when this is not an array.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let array) = self, array.indices.contains(index) else { return nil }
        return array[index]
    }
}

extension JSONValue: CustomStringConvertible {
    /// The compact serialization, so test failures and logs show JSON.
    public var description: String { serializedString }
}
