import Foundation
import Testing

@testable import ParleyPostgres

@Suite struct QueryBuildingTests {
    @Test func interpolationTurnsValuesIntoNumberedBinds() {
        let id = 42
        let name = "alice"
        let query: PostgresQuery = "SELECT * FROM users WHERE id = \(id) AND name = \(name) LIMIT \(Int32(5))"
        #expect(query.sql == "SELECT * FROM users WHERE id = $1 AND name = $2 LIMIT $3")
        #expect(query.binds.count == 3)
        #expect(query.binds[0] == .text("42", typeOID: PostgresTypeOID.int8))
        #expect(query.binds[1] == .text("alice"))
        #expect(query.binds[2] == .text("5", typeOID: PostgresTypeOID.int4))
    }

    @Test func injectionAttemptIsABindNotSQL() {
        let evil = "x'; DROP TABLE users; --"
        let query: PostgresQuery = "SELECT 1 FROM users WHERE name = \(evil)"
        #expect(query.sql == "SELECT 1 FROM users WHERE name = $1")
        #expect(query.binds == [.text(evil)])
    }

    @Test func unescapedInsertsRawText() {
        let table = "users"
        let query: PostgresQuery = "SELECT count(*) FROM \(unescaped: table) WHERE id > \(1)"
        #expect(query.sql == "SELECT count(*) FROM users WHERE id > $1")
        #expect(query.binds.count == 1)
    }

    @Test func optionalNilIsATypedNull() {
        let missing: Int? = nil
        let query: PostgresQuery = "SELECT \(missing)"
        #expect(query.binds == [PostgresValue(storage: .null, typeOID: PostgresTypeOID.int8)])
        #expect(query.binds[0].isNull)
    }

    @Test func descriptionNeverShowsBindValues() {
        let secret = "hunter2"
        let query: PostgresQuery = "UPDATE users SET password = \(secret)"
        #expect(!query.description.contains(secret))
    }

    @Test func configurationNeverPrintsTheConnectionString() {
        let configuration = PostgresConfiguration(conninfo: "postgresql://app:s3cret@db/parley")
        #expect(!"\(configuration)".contains("s3cret"))
        #expect(!String(reflecting: configuration).contains("s3cret"))
    }

    @Test func errorDescriptionWithholdsDetailAndQuotedInput() {
        var error = PostgresError(
            kind: .server, message: "duplicate key value violates unique constraint \"users_email_key\"",
            sqlState: "23505", detail: "Key (email)=(secret@example.com) already exists.",
            constraint: "users_email_key")
        #expect(!error.description.contains("secret@example.com"))
        #expect(error.description.contains("users_email_key"))
        error = PostgresError(
            kind: .server, message: "invalid input syntax for type integer: \"hunter2\"", sqlState: "22P02")
        #expect(!error.description.contains("hunter2"))
    }
}

@Suite struct TimestampTextTests {
    @Test func formatsAndParsesUTC() throws {
        let micros: Int64 = 1_700_000_000_123_456
        let text = PostgresTimestamp.format(microseconds: micros)
        #expect(text == "2023-11-14 22:13:20.123456+00")
        let parsed = Array(text.utf8).withUnsafeBufferPointer { PostgresTimestamp.parse($0) }
        #expect(parsed == micros)
    }

    @Test(arguments: [
        ("2024-02-29 12:00:00+05:30", Int64(1_709_188_200_000_000)),
        ("2024-02-29 06:30:00", Int64(1_709_188_200_000_000)),
        ("1970-01-01", Int64(0)),
        ("1969-12-31 23:59:59.5+00", Int64(-500_000)),
        ("2000-01-01 00:00:00-00:00:36", Int64(946_684_836_000_000)),
        ("0001-01-01 00:00:00+00 BC", Int64(-62_167_219_200_000_000)),
    ])
    func parsesISOVariants(text: String, micros: Int64) {
        let parsed = Array(text.utf8).withUnsafeBufferPointer { PostgresTimestamp.parse($0) }
        #expect(parsed == micros)
    }

    @Test func rejectsGarbage() {
        for text in ["", "2024-13-01", "yesterday", "2024-01-01 25:00", "2024-01-01 00:00:00+"] {
            let parsed = Array(text.utf8).withUnsafeBufferPointer { PostgresTimestamp.parse($0) }
            #expect(parsed == nil, "\(text)")
        }
    }

    @Test func roundTripsAcrossCenturies() {
        for micros: Int64 in [
            -62_135_596_800_000_000, -1, 0, 951_782_400_000_001, 4_102_444_800_000_000, 253_402_300_799_999_999,
        ] {
            let text = PostgresTimestamp.format(microseconds: micros)
            let parsed = Array(text.utf8).withUnsafeBufferPointer { PostgresTimestamp.parse($0) }
            #expect(parsed == micros, "\(text)")
        }
    }
}

@Suite struct StatementCacheTests {
    @Test func evictsLeastRecentlyUsed() {
        var cache = StatementCache(capacity: 2)
        let a = cache.insert("A", binds: [])
        let b = cache.insert("B", binds: [])
        #expect(a.evicted == nil && b.evicted == nil)
        #expect(cache.lookup("A", binds: []) == a.name) // B is now the oldest
        let c = cache.insert("C", binds: [])
        #expect(c.evicted == b.name)
        #expect(cache.lookup("B", binds: []) == nil)
        #expect(cache.lookup("A", binds: []) == a.name)
        #expect(cache.count == 2)
        #expect(Set([a.name, b.name, c.name]).count == 3)
    }

    @Test func sameTextWithOtherParameterTypesIsAnotherStatement() {
        var cache = StatementCache(capacity: 4)
        let asDouble = cache.insert("SELECT $1", binds: [PostgresValue(1.5)])
        #expect(cache.lookup("SELECT $1", binds: [PostgresValue(1.5)]) == asDouble.name)
        #expect(cache.lookup("SELECT $1", binds: [PostgresValue(1)]) == nil)
        let asInt = cache.insert("SELECT $1", binds: [PostgresValue(1)])
        #expect(asInt.evicted == asDouble.name)
        #expect(cache.lookup("SELECT $1", binds: [PostgresValue(2)]) == asInt.name)
        // A NULL of a type matches that type.
        #expect(cache.lookup("SELECT $1", binds: [PostgresValue(Int?.none)]) == asInt.name)
    }
}

@Suite(.serialized) struct QueryDatabaseTests {
    @Test func decodesEverySupportedTypeAndNulls() async throws {
        try await withTestClient { client, _ in
            let date = Date(timeIntervalSince1970: 1_700_000_000.123456)
            let bytes: [UInt8] = [0, 1, 2, 0xFE, 0xFF, 0x5C, 0x27]
            let rows = try await client.query(
                """
                SELECT \(Int(-9_000_000_000_000_000_000)), \(Int32.max), \(Int64.min), \("héllo ✓"), \(true), \(false),
                       \(3.25), \(bytes), \(date), 12::smallint, 1.5::numeric, 'NaN'::float8, '-Infinity'::float8,
                       '2024-01-02'::date, NULL::int, NULL::text
                """)
            #expect(rows.count == 1)
            let row = try #require(rows.first)
            #expect(try row.decode(0, as: Int.self) == -9_000_000_000_000_000_000)
            #expect(try row.decode(1, as: Int32.self) == Int32.max)
            #expect(try row.decode(2, as: Int64.self) == Int64.min)
            #expect(try row.decode(3, as: String.self) == "héllo ✓")
            #expect(try row.decode(4, as: Bool.self) == true)
            #expect(try row.decode(5, as: Bool.self) == false)
            #expect(try row.decode(6, as: Double.self) == 3.25)
            #expect(try row.decode(7, as: [UInt8].self) == bytes)
            let decodedDate = try row.decode(8, as: Date.self)
            #expect(abs(decodedDate.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.000_001)
            #expect(try row.decode(9, as: Int.self) == 12)
            #expect(try row.decode(10, as: Double.self) == 1.5)
            #expect(try row.decode(11, as: Double.self).isNaN)
            #expect(try row.decode(12, as: Double.self) == -.infinity)
            #expect(try row.decode(13, as: Date.self) == Date(timeIntervalSince1970: 1_704_153_600))
            #expect(row.isNull(14))
            #expect(try row.decode(14, as: Int?.self) == nil)
            #expect(try row.decode(15, as: String?.self) == nil)
            #expect(try row.decode(3, as: String?.self) == "héllo ✓")
            let nullError = #expect(throws: PostgresError.self) { try row.decode(14, as: Int.self) }
            #expect(nullError?.kind == .decoding)
            let typeError = #expect(throws: PostgresError.self) { try row.decode(3, as: Int.self) }
            #expect(typeError?.kind == .decoding)
        }
    }

    /// Text arrays come back as they went in, whatever PostgreSQL had to quote or escape in its output.
    @Test func textArraysRoundTrip() async throws {
        try await withTestClient { client, _ in
            let values: [String?] = [
                "plain", "with space", "comma,inside", #"quote"inside"#, #"back\slash"#, "{braces}", "", "NULL", nil,
                "null", "中文", "  ",
            ]
            let rows = try await client.query(
                """
                SELECT \(PostgresTextArray(optionals: values))::text[] AS a, '{}'::text[] AS empty, NULL::text[] AS none,
                       ARRAY['x'] AS one
                """)
            let row = try #require(rows.first)
            #expect(try row.decode("a", as: PostgresTextArray.self).values == values)
            #expect(try row.decode("empty", as: PostgresTextArray.self).values.isEmpty)
            #expect(try row.decode("none", as: PostgresTextArray?.self) == nil)
            #expect(try row.decode("one", as: PostgresTextArray.self).values == ["x"])
            #expect(throws: PostgresError.self) { try row.decode("one", as: Int.self) }
        }
    }

    @Test func malformedTextArraysAreDecodingErrors() {
        for literal in ["", "{", "x}", #"{"a}"#, #"{"a"b}"#, "{{a},{b}}", #"{"a"#] {
            let bytes = Array(literal.utf8)
            let error = bytes.withUnsafeBufferPointer { buffer -> PostgresError? in
                do {
                    _ = try PostgresTextArray.decode(postgresText: buffer, typeOID: 1009)
                    return nil
                } catch {
                    return error as? PostgresError
                }
            }
            #expect(error?.kind == .decoding, "\(literal)")
        }
    }

    @Test func bindsNullsOfEveryTypeAndDecodesByColumnName() async throws {
        try await withTestClient { client, _ in
            let noInt: Int? = nil, noText: String? = nil, noBool: Bool? = nil, noBytes: [UInt8]? = nil,
                noDate: Date? = nil
            let rows = try await client.query(
                """
                SELECT \(noInt) IS NULL AS a, \(noText)::text IS NULL AS b, \(noBool) IS NULL AS c, \(noBytes) IS NULL AS d,
                       \(noDate) IS NULL AS e, \(Optional(7)) AS seven
                """)
            let row = try #require(rows.first)
            for name in ["a", "b", "c", "d", "e"] { #expect(try row.decode(name, as: Bool.self), "\(name)") }
            #expect(try row.decode("seven", as: Int?.self) == 7)
            #expect(rows.columnNames == ["a", "b", "c", "d", "e", "seven"])
            #expect(throws: PostgresError.self) { try row.decode("nope", as: Int.self) }
        }
    }

    @Test func roundTripsValuesThroughATable() async throws {
        try await withTestClient { client, _ in
            _ = try await client.query(
                """
                CREATE TABLE things (id bigserial PRIMARY KEY, name text NOT NULL, data bytea, at timestamptz, score float8)
                """)
            let payload = [UInt8](0...255)
            let date = Date(timeIntervalSince1970: 1_234_567_890.5)
            let inserted = try await client.query(
                """
                INSERT INTO things (name, data, at, score)
                VALUES (\("a"), \(payload), \(date), \(0.1)), (\("b"), \(nil as [UInt8]?), \(nil as Date?), \(nil as Double?))
                """)
            #expect(inserted.affectedRows == 2)
            let rows = try await client.query("SELECT name, data, at, score FROM things ORDER BY id")
            #expect(rows.count == 2)
            #expect(try rows[0].decode(1, as: [UInt8].self) == payload)
            #expect(try rows[0].decode(2, as: Date.self) == date)
            #expect(try rows[0].decode(3, as: Double.self) == 0.1)
            #expect(try rows[1].decode(1, as: [UInt8]?.self) == nil)
            #expect(try rows[1].decode(2, as: Date?.self) == nil)
            let updated = try await client.query("UPDATE things SET score = 1 WHERE score IS NULL OR score < 1")
            #expect(updated.affectedRows == 2)
        }
    }

    @Test func doublesAndIntegersRoundTripAtTheirLimits() async throws {
        try await withTestClient { client, _ in
            for value in [
                0.1, -2.5, 1e-300, 5e-324, .greatestFiniteMagnitude, .infinity, -.infinity, 9_007_199_254_740_993,
            ] {
                let rows = try await client.query("SELECT \(value)")
                #expect(try rows.first?.decode(0, as: Double.self) == value)
            }
            let nan = try await client.query("SELECT \(Double.nan)")
            #expect(try nan.first?.decode(0, as: Double.self).isNaN == true)
            for value in [Int.min, -1, 0, Int.max] {
                let rows = try await client.query("SELECT \(value)")
                #expect(try rows.first?.decode(0, as: Int.self) == value)
            }
            let big = try await client.query("SELECT 2147483648::bigint")
            #expect(throws: PostgresError.self) { try big.first?.decode(0, as: Int32.self) }
            let tooBig = try await client.query("SELECT 99999999999999999999::numeric")
            #expect(throws: PostgresError.self) { try tooBig.first?.decode(0, as: Int.self) }
        }
    }

    @Test func injectionAttemptStaysAValue() async throws {
        try await withTestClient { client, _ in
            _ = try await client.query("CREATE TABLE users (name text)")
            _ = try await client.query("INSERT INTO users VALUES ('alice')")
            let evil = "alice' OR '1'='1"
            let rows = try await client.query("SELECT count(*) FROM users WHERE name = \(evil)")
            #expect(try rows.first?.decode(0, as: Int.self) == 0)
            let drop = "x'); DROP TABLE users; --"
            _ = try await client.query("INSERT INTO users VALUES (\(drop))")
            let count = try await client.query("SELECT count(*) FROM users")
            #expect(try count.first?.decode(0, as: Int.self) == 2)
        }
    }

    @Test func uniqueViolationNamesTheConstraint() async throws {
        try await withTestClient { client, _ in
            _ = try await client.query("CREATE TABLE accounts (email text CONSTRAINT accounts_email_key UNIQUE)")
            _ = try await client.query("INSERT INTO accounts VALUES (\("a@example.com"))")
            let error = await #expect(throws: PostgresError.self) {
                try await client.query("INSERT INTO accounts VALUES (\("a@example.com"))")
            }
            #expect(error?.kind == .server)
            #expect(error?.isUniqueViolation == true)
            #expect(error?.constraint == "accounts_email_key")
            #expect(error?.table == "accounts")
            #expect(error?.description.contains("a@example.com") == false)
            // The connection is still fine afterwards.
            let rows = try await client.query("SELECT count(*) FROM accounts")
            #expect(try rows.first?.decode(0, as: Int.self) == 1)
        }
    }

    @Test func syntaxErrorIsAServerErrorAndTheConnectionSurvives() async throws {
        try await withTestClient(poolSize: 1) { client, _ in
            let error = await #expect(throws: PostgresError.self) { try await client.query("SELEC 1") }
            #expect(error?.kind == .server)
            #expect(error?.sqlState == "42601")
            let rows = try await client.query("SELECT 2")
            #expect(try rows.first?.decode(0, as: Int.self) == 2)
            #expect(client.poolStatistics.total <= 2)
        }
    }

    @Test func preparedStatementsAreReused() async throws {
        try await withTestClient { client, _ in
            try await client.withConnection { connection in
                for i in 0..<50 {
                    let rows = try await connection.query("SELECT \(i) + 1")
                    #expect(try rows.first?.decode(0, as: Int.self) == i + 1)
                }
                let prepared = try await connection.query(
                    """
                    SELECT count(*) FROM pg_prepared_statements WHERE statement = 'SELECT $1 + 1'
                    """)
                #expect(try prepared.first?.decode(0, as: Int.self) == 1)
                #expect(await connection.preparedStatementCount == 2)
            }
        }
    }

    @Test func statementCacheEvictionDeallocatesOnTheServer() async throws {
        try await withTestClient(statementCacheCapacity: 2) { client, _ in
            try await client.withConnection { connection in
                for text in ["a", "b", "c", "d"] {
                    _ = try await connection.query(PostgresQuery(unsafeSQL: "SELECT '\(text)'::text"))
                }
                let rows = try await connection.query("SELECT count(*) FROM pg_prepared_statements")
                #expect(try rows.first?.decode(0, as: Int.self) == 2)
            }
        }
    }

    @Test func executeRunsSeveralStatements() async throws {
        try await withTestClient { client, _ in
            try await client.withConnection { connection in
                try await connection.execute(
                    unsafeSQL: """
                        CREATE TABLE t (n int); INSERT INTO t VALUES (1), (2); INSERT INTO t VALUES (3)
                        """)
                let error = await #expect(throws: PostgresError.self) {
                    try await connection.execute(
                        unsafeSQL: "INSERT INTO t VALUES (4); SELECT 1/0; INSERT INTO t VALUES (5)")
                }
                #expect(error?.sqlState == "22012")
            }
            let rows = try await client.query("SELECT sum(n) FROM t")
            #expect(try rows.first?.decode(0, as: Int.self) == 6)
        }
    }

    @Test func connectionIsUnusableAfterItsLease() async throws {
        try await withTestClient { client, _ in
            let leaked = try await client.withConnection { $0 }
            let error = await #expect(throws: PostgresError.self) { try await leaked.query("SELECT 1") }
            #expect(error?.kind == .closed)
        }
    }
}
