import ParleyJSON
import ParleyPostgres

extension PublicProfile {
    /// The columns of `users` a public profile is made of, for `init(row:)`: the one way every feature reads a
    /// profile (qualified and prefixed through `columns(of:prefix:)` in a join).
    public static let columns = columns(of: "users")

    /// The profile columns of `table` (an alias of `users`), named `prefix` + the column (for joins with tables that
    /// share column names, such as `id`).
    public static func columns(of table: String, prefix: String = "") -> String {
        """
        \(table).id AS \(prefix)id, \(table).nickname AS \(prefix)nickname, \(table).avatar AS \(prefix)avatar, \
        \(table).signature AS \(prefix)signature, \(table).ex AS \(prefix)ex, \
        \(table).deleted_at IS NOT NULL AS \(prefix)deleted
        """
    }

    public init(row: PostgresRow, prefix: String = "") throws {
        self.init(
            id: try row.decode(prefix + "id"), nickname: try row.decode(prefix + "nickname"),
            avatar: try row.decode(prefix + "avatar"), signature: try row.decode(prefix + "signature"),
            ex: try Self.ex(row, column: prefix + "ex"), deleted: try row.decode(prefix + "deleted"))
    }

    /// `ex` is stored as the JSON text the server wrote (NULL when unset).
    static func ex(_ row: PostgresRow, column: String = "ex") throws -> JSONValue? {
        guard let text = try row.decode(column, as: String?.self) else { return nil }
        return try JSONValue.parse(text)
    }
}
