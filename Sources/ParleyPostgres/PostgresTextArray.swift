/// A text[] literal (`{"a","b"}`) bound as one parameter, for `= ANY($1::text[])`.
public struct PostgresTextArray: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { 0 }
    public let values: [String]

    public init(_ values: [String]) {
        self.values = values
    }

    public var postgresValue: PostgresValue {
        let quoted = values.map { value -> String in
            var escaped = "\""
            for character in value {
                if character == "\"" || character == "\\" { escaped.append("\\") }
                escaped.append(character)
            }
            return escaped + "\""
        }
        return .text("{" + quoted.joined(separator: ",") + "}")
    }
}
