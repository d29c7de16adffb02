import ParleyTestSupport
import Synchronization
import Testing

@testable import ParleyPostgres

/// What a lock holder saw, in order.
private final class LockEvents: Sendable {
    private let events = Mutex<[SessionLockEvent]>([])
    func append(_ event: SessionLockEvent) { events.withLock { $0.append(event) } }
    var all: [SessionLockEvent] { events.withLock { $0 } }

    /// Holds `key` on `client` until the returned task is cancelled.
    static func hold(_ key: Int64, on client: PostgresClient) -> (LockEvents, Task<Void, Never>) {
        let events = LockEvents()
        let task = Task {
            for await event in client.sessionLock(key) { events.append(event) }
        }
        return (events, task)
    }
}

/// No time limit: in the whole suite these wait their turn for a database with every other test (ListenTests has none
/// either); each wait below is bounded by `eventually`.
@Suite struct SessionLockTests {
    private static let key: Int64 = 0x5445_5354

    private func withSecondClient(url: String, _ body: (PostgresClient) async throws -> Void) async throws {
        var configuration = PostgresConfiguration(conninfo: url, poolSize: 1)
        configuration.sessionLockRetryInterval = .milliseconds(50)
        try await withPostgresClient(configuration, body)
    }

    /// The server process ids holding advisory lock `key` in this database.
    private func holders(url: String) async throws -> [Int] {
        try await withAdminClient(url: url) { admin in
            let rows = try await admin.query(
                """
                SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
                AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                AND ((classid::bigint << 32) | objid::bigint) = \(Self.key)
                """)
            return try rows.map { Int(try $0.decode("pid", as: Int32.self)) }
        }
    }

    @Test func oneClientHoldsTheLockAndAnotherTakesItWhenItIsReleased() async throws {
        try await withTestClient { first, url in
            try await withSecondClient(url: url) { second in
                let (firstEvents, firstHolder) = LockEvents.hold(Self.key, on: first)
                #expect(try await eventually(timeout: .seconds(60)) { firstEvents.all == [.acquired] } != nil)
                let firstPID = try #require(await first.session.backendPID())
                #expect(try await holders(url: url) == [firstPID])

                let (secondEvents, secondHolder) = LockEvents.hold(Self.key, on: second)
                // Refused while the first holds it, however often it tries.
                #expect(
                    try await eventually(timeout: .seconds(60)) { await second.session.lockState().attempts >= 3 }
                        != nil)
                #expect(secondEvents.all.isEmpty)
                #expect(await second.session.lockState().held.isEmpty)

                // The first lets go: the second's next attempt takes it.
                firstHolder.cancel()
                await firstHolder.value
                #expect(try await eventually(timeout: .seconds(60)) { secondEvents.all == [.acquired] } != nil)
                let secondPID = try #require(await second.session.backendPID())
                #expect(try await holders(url: url) == [secondPID])
                #expect(await first.session.lockState().held.isEmpty)
                secondHolder.cancel()
                await secondHolder.value
                #expect(try await eventually(timeout: .seconds(60)) { try await holders(url: url).isEmpty } != nil)
            }
        }
    }

    @Test func aLostConnectionLosesTheLockAndTheReconnectTakesItAgain() async throws {
        try await withTestClient { client, url in
            let (events, holder) = LockEvents.hold(Self.key, on: client)
            #expect(try await eventually(timeout: .seconds(60)) { events.all == [.acquired] } != nil)
            let pid = try #require(await client.session.backendPID())
            try await withAdminClient(url: url) { admin in
                let rows = try await admin.query("SELECT pg_terminate_backend(\(Int32(pid)))")
                #expect(try rows.first?.decode(0, as: Bool.self) == true)
            }
            #expect(try await eventually(timeout: .seconds(60)) { events.all == [.acquired, .lost, .acquired] } != nil)
            let newPID = try #require(await client.session.backendPID())
            #expect(newPID != pid)
            #expect(try await holders(url: url) == [newPID])
            holder.cancel()
            await holder.value
        }
    }

    @Test func aLockAndAChannelShareTheSessionConnection() async throws {
        try await withTestClient { client, _ in
            let (events, holder) = LockEvents.hold(Self.key, on: client)
            let stream = client.listen("shared")
            #expect(await client.waitUntilListening("shared", timeout: .seconds(30)))
            #expect(try await eventually(timeout: .seconds(60)) { events.all == [.acquired] } != nil)
            try await client.notify("shared", payload: "one connection")
            var iterator = stream.makeAsyncIterator()
            #expect(await iterator.next() == .notification(channel: "shared", payload: "one connection"))
            #expect(await client.session.lockState().held == [Self.key])
            holder.cancel()
            await holder.value
        }
    }

    @Test func shutdownEndsTheLockStream() async throws {
        try await withTestClient { client, _ in
            let (events, holder) = LockEvents.hold(Self.key, on: client)
            let acquired = try await eventually(timeout: .seconds(60)) { events.all == [.acquired] }
            #expect(acquired != nil)
            await client.session.shutDown()
            await holder.value
            #expect(events.all == [.acquired])
        }
    }
}
