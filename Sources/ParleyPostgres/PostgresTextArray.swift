/// A text[] literal (`{"a","b",NULL}`) bound as one parameter, for `= ANY($1::text[])` and `unnest`.
public struct PostgresTextArray: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { 0 }
    public let values: [String?]

    public init(_ values: [String]) {
        self.values = values
    }

    /// nil elements become SQL NULLs.
    public init(optionals values: [String?]) {
        self.values = values
    }

    /// Built as bytes: this runs for every column of every batch of messages.
    public var postgresValue: PostgresValue {
        var literal: [UInt8] = [UInt8(ascii: "{")]
        literal.reserveCapacity(values.reduce(2) { $0 + ($1?.utf8.count ?? 4) + 3 })
        for (index, value) in values.enumerated() {
            if index > 0 { literal.append(UInt8(ascii: ",")) }
            guard let value else {
                literal.append(contentsOf: "NULL".utf8)
                continue
            }
            literal.append(UInt8(ascii: "\""))
            for byte in value.utf8 {
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { literal.append(UInt8(ascii: "\\")) }
                literal.append(byte)
            }
            literal.append(UInt8(ascii: "\""))
        }
        literal.append(UInt8(ascii: "}"))
        return .text(String(decoding: literal, as: UTF8.self))
    }
}
