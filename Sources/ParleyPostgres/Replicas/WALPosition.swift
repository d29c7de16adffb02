/// A position in PostgreSQL's write-ahead log (`pg_lsn`): a byte offset, written as two hexadecimal halves
/// (`16/B374D848`).
public struct WALPosition: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var offset: UInt64

    public init(offset: UInt64) { self.offset = offset }

    /// Parses `pg_lsn`'s text form; nil for anything else.
    public init?(_ text: some StringProtocol) {
        let halves = text.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2, (1...8).contains(halves[0].count), (1...8).contains(halves[1].count),
            let high = UInt64(halves[0], radix: 16), let low = UInt64(halves[1], radix: 16)
        else { return nil }
        offset = high << 32 | low
    }

    public var description: String {
        String(offset >> 32, radix: 16, uppercase: true) + "/"
            + String(offset & 0xFFFF_FFFF, radix: 16, uppercase: true)
    }

    public static func < (lhs: WALPosition, rhs: WALPosition) -> Bool { lhs.offset < rhs.offset }

    /// The longest WAL page header (the first page of a segment has the long one, the others a short 24 bytes).
    static let longestPageHeader: UInt64 = 40

    /// Whether a standby that has replayed up to `self` has every record that was in the primary's log when
    /// `pg_current_wal_insert_lsn()` said `insertPosition`.
    ///
    /// A replayed position is the end of a record; the insert position is where the next record goes. They differ
    /// when the last record ended exactly at a page boundary: the insert position then points past the next page's
    /// header, where nothing has been written, and a standby that has everything reports the boundary. Without this
    /// rule an idle database whose last record filled its page would send every read to the primary until the next
    /// write. No record fits in a page header's bytes (a record needs at least 24 bytes after them), so nothing is
    /// missed.
    public func covers(insertPosition: WALPosition, pageSize: UInt64) -> Bool {
        if self >= insertPosition { return true }
        guard pageSize > 0, offset % pageSize == 0 else { return false }
        return insertPosition.offset - offset <= Self.longestPageHeader
    }
}
