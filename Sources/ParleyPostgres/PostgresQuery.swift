/// SQL text plus its bind parameters.
///
/// Built by string interpolation, every interpolated value becomes a `$n` placeholder and a bind, so
/// input can never change the statement:
/// ```swift
/// let rows = try await db.query("SELECT name FROM users WHERE id = \(id) AND org = \(org)")
/// // sql: "SELECT name FROM users WHERE id = $1 AND org = $2", binds: [id, org]
/// ```
/// Identifiers and other raw fragments need the explicit, unsafe `\(unescaped: "...")`.
public struct PostgresQuery: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    public var sql: String
    public var binds: [PostgresValue]

    /// Raw SQL with `$n` placeholders that the caller numbered. Nothing is escaped.
    public init(unsafeSQL sql: String, binds: [PostgresValue] = []) {
        self.sql = sql
        self.binds = binds
    }

    public init(stringLiteral value: String) {
        sql = value
        binds = []
    }

    public init(stringInterpolation: StringInterpolation) {
        sql = stringInterpolation.sql
        binds = stringInterpolation.binds
    }

    /// The SQL text and the number of binds; never the bound values.
    public var description: String { "\(sql) [\(binds.count) bind(s)]" }

    public struct StringInterpolation: StringInterpolationProtocol {
        public var sql: String
        public var binds: [PostgresValue]

        public init(literalCapacity: Int, interpolationCount: Int) {
            sql = ""
            sql.reserveCapacity(literalCapacity + 3 * interpolationCount)
            binds = []
            binds.reserveCapacity(interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) {
            sql += literal
        }

        /// A bind parameter: `$n` in the SQL, the value sent separately.
        public mutating func appendInterpolation<T: PostgresEncodable>(_ value: T) {
            binds.append(value.postgresValue)
            sql += "$"
            sql += String(binds.count)
        }

        /// An optional bind: `nil` is sent as a NULL of `T`'s type.
        public mutating func appendInterpolation<T: PostgresEncodable>(_ value: T?) {
            binds.append(value.postgresValue)
            sql += "$"
            sql += String(binds.count)
        }

        /// Raw SQL inserted verbatim (identifiers, ORDER BY direction chosen from a fixed set, ...).
        /// Never pass user input here.
        public mutating func appendInterpolation(unescaped raw: String) {
            sql += raw
        }
    }
}
