/// Lets a `JSONValue` sit inside types coded by Foundation's `JSONEncoder` / `JSONDecoder`, for
/// fields whose shape is free-form (message metadata, client payloads).
extension JSONValue: Codable {
    /// Tries, in order: null, `Bool`, `Int64`, `UInt64`, `Double`, `String`, array, object. Whole
    /// numbers come back exact up to `UInt64.max`; others go through `Double`. Object keys are
    /// sorted, since a decoder's dictionary has no order of its own and output should be
    /// deterministic.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let integer = try? container.decode(Int64.self) {
            self = .number(JSONNumber(integer))
        } else if let unsigned = try? container.decode(UInt64.self) {
            // Above Int64.max: kept exact rather than rounded through Double (64-bit ids).
            self = .number(JSONNumber(uncheckedText: String(unsigned)))
        } else if let double = try? container.decode(Double.self), let number = JSONNumber(double) {
            self = .number(number)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else if let dictionary = try? container.decode([String: JSONValue].self) {
            let members = dictionary.sorted { $0.key < $1.key }.map { JSONObject.Member(key: $0.key, value: $0.value) }
            self = .object(JSONObject(uniqueEntries: members, index: nil))
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a JSON value")
        }
    }

    /// Integers as `Int64` (or `UInt64` above its range), other numbers as `Double`, objects
    /// through a keyed container in stored order.
    public func encode(to encoder: any Encoder) throws {
        if case .object(let object) = self {
            var container = encoder.container(keyedBy: MemberKey.self)
            for (key, value) in object { try container.encode(value, forKey: MemberKey(key)) }
            return
        }
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let bool): try container.encode(bool)
        case .number(let number):
            if let integer = number.int64Value {
                try container.encode(integer)
            } else if let unsigned = UInt64(number.text) {
                try container.encode(unsigned)
            } else {
                try container.encode(number.doubleValue)
            }
        case .string(let string): try container.encode(string)
        case .array(let array): try container.encode(array)
        case .object: preconditionFailure("handled above")
        }
    }

    /// Any string as a coding key, for object members.
    private struct MemberKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { self.stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
