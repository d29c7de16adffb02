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

    public var postgresValue: PostgresValue {
        var literal = "{"
        literal.reserveCapacity(values.reduce(2) { $0 + ($1?.utf8.count ?? 4) + 3 })
        for (index, value) in values.enumerated() {
            if index > 0 { literal.append(",") }
            guard let value else {
                literal.append("NULL")
                continue
            }
            literal.append("\"")
            for character in value.unicodeScalars {
                if character == "\"" || character == "\\" { literal.append("\\") }
                literal.unicodeScalars.append(character)
            }
            literal.append("\"")
        }
        literal.append("}")
        return .text(literal)
    }
}
