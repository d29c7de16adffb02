import Foundation

/// One bind parameter as sent to the server: text (or raw bytes for `bytea`) plus its type OID.
///
/// OID 0 lets the server infer the type from context, which is what strings use so that one
/// `String` can fill a `text`, `uuid`, `jsonb` or enum column alike.
public struct PostgresValue: Sendable, Hashable {
    enum Storage: Sendable, Hashable {
        case null
        case text(String)
        case binary([UInt8])
    }

    var storage: Storage
    /// The parameter's type OID, or 0 for "infer from context".
    public var typeOID: UInt32

    init(storage: Storage, typeOID: UInt32) {
        self.storage = storage
        self.typeOID = typeOID
    }

    /// SQL NULL of an unspecified type.
    public static let null = PostgresValue(storage: .null, typeOID: 0)

    /// A value in PostgreSQL's text input format, typed by `typeOID` (0 = infer).
    public static func text(_ text: String, typeOID: UInt32 = 0) -> PostgresValue {
        PostgresValue(storage: .text(text), typeOID: typeOID)
    }

    /// The encoding of any supported Swift value.
    public init<T: PostgresEncodable>(_ value: T) {
        self = value.postgresValue
    }

    public var isNull: Bool { storage == .null }
}

/// OIDs of the built-in types Parley binds and decodes (`pg_type.oid`; fixed since PostgreSQL 7).
public enum PostgresTypeOID {
    public static let bool: UInt32 = 16
    public static let bytea: UInt32 = 17
    public static let int8: UInt32 = 20
    public static let int2: UInt32 = 21
    public static let int4: UInt32 = 23
    public static let text: UInt32 = 25
    public static let float4: UInt32 = 700
    public static let float8: UInt32 = 701
    public static let varchar: UInt32 = 1043
    public static let date: UInt32 = 1082
    public static let timestamp: UInt32 = 1114
    public static let timestamptz: UInt32 = 1184
    public static let numeric: UInt32 = 1700
    public static let uuid: UInt32 = 2950
}

/// A Swift type that can be bound as a query parameter.
public protocol PostgresEncodable: Sendable {
    /// The type OID sent with the parameter (also for NULLs of this type); 0 means "let the server infer".
    static var postgresTypeOID: UInt32 { get }
    var postgresValue: PostgresValue { get }
}

extension Int: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { PostgresTypeOID.int8 }
    public var postgresValue: PostgresValue { .init(storage: .text(String(self)), typeOID: PostgresTypeOID.int8) }
}

extension Int64: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { PostgresTypeOID.int8 }
    public var postgresValue: PostgresValue { .init(storage: .text(String(self)), typeOID: PostgresTypeOID.int8) }
}

extension Int32: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { PostgresTypeOID.int4 }
    public var postgresValue: PostgresValue { .init(storage: .text(String(self)), typeOID: PostgresTypeOID.int4) }
}

/// Strings are sent untyped (OID 0) so the server reads them as whatever the context needs (`text`, `uuid`,
/// `jsonb`, an enum...). Where the context says nothing (`SELECT $1`, `$1 IS NULL`) add a cast: `\(s)::text`.
extension String: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { 0 }
    public var postgresValue: PostgresValue { .init(storage: .text(self), typeOID: 0) }
}

extension Substring: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { 0 }
    public var postgresValue: PostgresValue { .init(storage: .text(String(self)), typeOID: 0) }
}

extension Bool: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { PostgresTypeOID.bool }
    public var postgresValue: PostgresValue { .init(storage: .text(self ? "t" : "f"), typeOID: PostgresTypeOID.bool) }
}

extension Double: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { PostgresTypeOID.float8 }
    /// Swift's shortest round-trip form; "inf", "-inf" and "nan" are accepted by float8 input.
    public var postgresValue: PostgresValue { .init(storage: .text(description), typeOID: PostgresTypeOID.float8) }
}

extension Array: PostgresEncodable where Element == UInt8 {
    public static var postgresTypeOID: UInt32 { PostgresTypeOID.bytea }
    /// Sent in binary format: raw bytes, no hex doubling.
    public var postgresValue: PostgresValue { .init(storage: .binary(self), typeOID: PostgresTypeOID.bytea) }
}

extension Date: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { PostgresTypeOID.timestamptz }
    /// Microsecond precision (PostgreSQL's), always in UTC.
    public var postgresValue: PostgresValue {
        .init(
            storage: .text(PostgresTimestamp.format(microseconds: PostgresTimestamp.microseconds(of: self))),
            typeOID: PostgresTypeOID.timestamptz)
    }
}

extension Optional: PostgresEncodable where Wrapped: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { Wrapped.postgresTypeOID }
    public var postgresValue: PostgresValue {
        switch self {
        case .some(let value): value.postgresValue
        case .none: PostgresValue(storage: .null, typeOID: Wrapped.postgresTypeOID)
        }
    }
}

extension PostgresValue: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { 0 }
    public var postgresValue: PostgresValue { self }
}
