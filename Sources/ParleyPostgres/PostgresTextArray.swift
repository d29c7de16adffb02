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

extension PostgresTextArray: PostgresDecodable {
    /// A one-dimensional array in PostgreSQL's text output: `{a,"b c",NULL}`. Elements that need it are quoted, with
    /// backslash escapes inside the quotes; an unquoted `NULL` is SQL NULL (a quoted one is the text).
    public static func decode(postgresText text: UnsafeBufferPointer<UInt8>?, typeOID: UInt32) throws(PostgresError)
        -> PostgresTextArray
    {
        let bytes = try notNull(text)
        let (open, close, quote, backslash, comma) = (
            UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: ",")
        )
        guard bytes.count >= 2, bytes[0] == open, bytes[bytes.count - 1] == close else {
            throw .decoding("column of type \(typeOID) is not a one-dimensional array")
        }
        let end = bytes.count - 1
        var values: [String?] = []
        var index = 1
        guard index < end else { return PostgresTextArray(optionals: []) }
        while true {
            var element: [UInt8] = []
            var quoted = false
            if bytes[index] == quote {
                quoted = true
                index += 1
                while true {
                    guard index < end else { throw .decoding("unterminated quoted array element") }
                    var byte = bytes[index]
                    if byte == quote {
                        index += 1
                        break
                    }
                    if byte == backslash {
                        index += 1
                        guard index < end else { throw .decoding("unterminated escape in an array element") }
                        byte = bytes[index]
                    }
                    element.append(byte)
                    index += 1
                }
            } else {
                while index < end && bytes[index] != comma {
                    guard bytes[index] != open, bytes[index] != quote else {
                        throw .decoding("column of type \(typeOID) is not a one-dimensional array")
                    }
                    element.append(bytes[index])
                    index += 1
                }
            }
            let isNull = !quoted && element.elementsEqual("NULL".utf8)
            values.append(isNull ? nil : String(decoding: element, as: UTF8.self))
            if index == end { return PostgresTextArray(optionals: values) }
            guard bytes[index] == comma else { throw .decoding("malformed array after an element") }
            index += 1
        }
    }
}
