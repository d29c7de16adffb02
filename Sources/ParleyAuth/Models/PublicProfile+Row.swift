import ParleyJSON
import ParleyPostgres

extension PublicProfile {
    /// The columns of `users` a public profile is made of, for `init(row:)`: the one way every feature reads a
    /// profile (qualify them through `columns(of:)` in a join).
    public static let columns = "id, nickname, avatar, signature, ex"

    public static func columns(of table: String) -> String {
        "\(table).id, \(table).nickname, \(table).avatar, \(table).signature, \(table).ex"
    }

    public init(row: PostgresRow) throws {
        self.init(
            id: try row.decode("id"), nickname: try row.decode("nickname"), avatar: try row.decode("avatar"),
            signature: try row.decode("signature"), ex: try Self.ex(row))
    }

    /// `ex` is stored as the JSON text the server wrote (NULL when unset).
    static func ex(_ row: PostgresRow) throws -> JSONValue? {
        guard let text = try row.decode("ex", as: String?.self) else { return nil }
        return try JSONValue.parse(text)
    }
}
