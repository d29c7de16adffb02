/// Something the services started after it use, with no work of its own while it runs: `start` when the group
/// reaches it, `stop` once the group stops it (after every service started later has stopped). The event
/// loops, a database client, an HTTP server's listeners, a thread pool.
public struct ResourceService: Service {
    public let name: String
    private let start: @Sendable () async throws -> Void
    private let stop: @Sendable () async -> Void

    public init(
        _ name: String, start: @escaping @Sendable () async throws -> Void = {},
        stop: @escaping @Sendable () async -> Void
    ) {
        self.name = name
        self.start = start
        self.stop = stop
    }

    public func prepare() async throws {
        try await start()
    }

    public func run() async {
        await Task.waitUntilCancelled()
        await withCancellationShield(stop)
    }
}
