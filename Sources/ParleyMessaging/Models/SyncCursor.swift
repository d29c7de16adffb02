/// A position in a user's change stream: the (transaction id, stream position) of the last change returned.
/// Opaque to clients; written as `<xid>-<position>`, each 1-18 digits (openapi.yaml's pattern; both stay far below
/// 10^18, and 18 digits always fit an Int64).
public struct SyncCursor: Sendable, Hashable, CustomStringConvertible {
    public var xid: UInt64
    public var position: Int64

    public static let origin = SyncCursor(xid: 0, position: 0)

    public init(xid: UInt64, position: Int64) {
        self.xid = xid
        self.position = position
    }

    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2,
            parts.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 18 && $0.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }),
            let xid = UInt64(parts[0]), let position = Int64(parts[1])
        else { return nil }
        self.init(xid: xid, position: position)
    }

    public var description: String { "\(xid)-\(position)" }
}
