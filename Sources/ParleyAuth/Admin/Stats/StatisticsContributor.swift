import ParleyJSON

/// A feature's part of `GET /api/admin/stats` (realtime: who is online now; files: what is stored): a cheap read of
/// its own counters for one app, shown under `name`. Auth knows the features only through these: `ParleyApp` hands
/// them over, so auth depends on none of them.
public struct StatisticsContributor: Sendable {
    /// The member of the answer's `data` this part fills.
    public let name: String
    public let read: @Sendable (_ appId: Int64) async throws -> JSONValue

    public init(_ name: String, read: @escaping @Sendable (_ appId: Int64) async throws -> JSONValue) {
        self.name = name
        self.read = read
    }
}
