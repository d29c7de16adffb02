import CLibPQ
import Glibc

/// Owns one `PGresult` and frees it with the last reference. A `PGresult` is read-only once created,
/// and libpq documents that it may be read from any thread, so rows decode wherever the caller runs.
final class ResultStorage: @unchecked Sendable {
    let result: OpaquePointer
    let rowCount: Int32
    let columnCount: Int32

    init(taking result: OpaquePointer) {
        self.result = result
        rowCount = PQntuples(result)
        columnCount = PQnfields(result)
    }

    deinit { PQclear(result) }

    @inline(__always)
    func text(row: Int32, column: Int32) -> UnsafeBufferPointer<UInt8>? {
        if PQgetisnull(result, row, column) != 0 { return nil }
        let length = Int(PQgetlength(result, row, column))
        guard let base = PQgetvalue(result, row, column) else { return nil }
        return UnsafeBufferPointer(start: UnsafeRawPointer(base).assumingMemoryBound(to: UInt8.self), count: length)
    }

    func columnIndex(named name: String) -> Int32? {
        name.withCString { wanted in
            for column in 0..<columnCount {
                if let actual = PQfname(result, column), strcmp(actual, wanted) == 0 { return column }
            }
            return nil
        }
    }

    func columnName(_ column: Int32) -> String {
        guard let name = PQfname(result, column) else { return "?" }
        return String(cString: name)
    }
}

/// The rows of one statement's result, decoded lazily from libpq's buffer (text format).
public struct PostgresRows: Sendable, RandomAccessCollection {
    let storage: ResultStorage?
    /// Rows inserted, updated, deleted, selected... as reported by the command tag (`PQcmdTuples`).
    public let affectedRows: Int

    init(storage: ResultStorage?) {
        self.storage = storage
        if let storage, let tuples = PQcmdTuples(storage.result) {
            var value = 0
            var p = tuples
            while p.pointee >= 0x30 && p.pointee <= 0x39 {
                value = value * 10 + Int(p.pointee - 0x30)
                p += 1
            }
            affectedRows = value
        } else {
            affectedRows = 0
        }
    }

    /// The command tag (`SELECT 1`, `INSERT 0 3`, `COMMIT`, `ROLLBACK`...).
    public var commandTag: String {
        guard let storage, let status = PQcmdStatus(storage.result) else { return "" }
        return String(cString: status)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { Int(storage?.rowCount ?? 0) }

    public subscript(position: Int) -> PostgresRow {
        precondition(position >= 0 && position < endIndex, "row index out of range")
        return PostgresRow(storage: storage!, row: Int32(position))
    }

    /// Column names in result order.
    public var columnNames: [String] {
        guard let storage else { return [] }
        return (0..<storage.columnCount).map { storage.columnName($0) }
    }
}

/// One result row. Cheap to copy: a reference to the shared result and an index.
public struct PostgresRow: Sendable {
    let storage: ResultStorage
    let row: Int32

    public var columnCount: Int { Int(storage.columnCount) }

    /// Decodes column `column` (0-based). NULL decodes only into an `Optional`; otherwise it throws `.decoding`.
    public func decode<T: PostgresDecodable>(_ column: Int, as type: T.Type = T.self) throws(PostgresError) -> T {
        try decodeColumn(Int32(truncatingIfNeeded: column), as: type)
    }

    /// Decodes the column with this exact name (as the server reports it: unquoted names are lower case).
    public func decode<T: PostgresDecodable>(_ name: String, as type: T.Type = T.self) throws(PostgresError) -> T {
        guard let column = storage.columnIndex(named: name) else {
            throw .decoding("no column named \"\(name)\" in the result")
        }
        return try decodeColumn(column, as: type)
    }

    /// True when the column is SQL NULL.
    public func isNull(_ column: Int) -> Bool {
        guard column >= 0 && column < Int(storage.columnCount) else { return true }
        return PQgetisnull(storage.result, row, Int32(column)) != 0
    }

    public func isNull(_ name: String) -> Bool {
        guard let column = storage.columnIndex(named: name) else { return true }
        return isNull(Int(column))
    }

    func decodeColumn<T: PostgresDecodable>(_ column: Int32, as type: T.Type) throws(PostgresError) -> T {
        guard column >= 0 && column < storage.columnCount else {
            throw .decoding("column index \(column) out of range (\(storage.columnCount) columns)")
        }
        let typeOID = UInt32(PQftype(storage.result, column))
        do {
            return try T.decode(postgresText: storage.text(row: row, column: column), typeOID: typeOID)
        } catch {
            var described = error
            described.message = "column \(column) (\(storage.columnName(column))): \(error.message)"
            throw described
        }
    }
}
