import Foundation
import ParleyLiveSupport
import ParleyNATS
import ParleyObservability
import ParleyTestSupport
import ParleyWebSocket
import Synchronization
import Testing

@testable import ParleyRealtime

/// A new user subscription is in effect only once NATS has it: the relay says a user's events reach this instance
/// (`whenReceiving`, from which the gateway answers the user's new connection) at the PONG of a flush written after
/// the SUB, or at its bound.
@Suite(.serialized, .enabled(if: HeldPongNATSServer.python != nil, "python3 not found"))
struct NATSRelayInterestTests {
    private static let subjects = RelaySubjects(prefix: "parley")!

    /// A relay on `server`, started and reading; `stop` ends it.
    private func startRelay(_ server: HeldPongNATSServer, confirmTimeout: Duration) async throws -> (
        relay: NATSRelay, log: LogSink, stop: @Sendable () async -> Void
    ) {
        var configuration = try NATSConfiguration(urls: server.url)
        configuration.connectTimeout = .seconds(20)
        // Closing drains with a PING whose PONG this server may hold.
        configuration.drainTimeout = .milliseconds(100)
        let log = LogSink(capturingAt: .debug)
        let relay = NATSRelay(
            configuration: configuration, subjects: Self.subjects, loop: TestEnvironment.eventLoopGroup.next(),
            logger: Logger(sink: log), metrics: MetricsRegistry(), confirmTimeout: confirmTimeout)
        let sinks = RelaySinks(deliver: { _ in }, deliverRouted: { _ in }, lostFeed: {})
        #expect(await relay.start(timeout: .seconds(20), sinks: sinks), "\(log.capturedText)")
        let reading = Task { await relay.run() }
        let stop: @Sendable () async -> Void = {
            reading.cancel()
            await reading.value
        }
        return (relay, log, stop)
    }

    @Test func aNewUserIsReceivedOnlyOnceNATSConfirmedTheSubscription() async throws {
        let server = try await HeldPongNATSServer()
        defer { server.remove() }
        let (relay, log, stop) = try await startRelay(server, confirmTimeout: .seconds(60))
        let subject = Self.subjects.user(appId: 7, userId: "alice")
        let first = Mutex(false)
        let second = Mutex(false)

        relay.userInterest(appId: 7, userId: "alice", present: true)
        relay.whenReceiving(appId: 7, userId: "alice") { first.withLock { $0 = true } }
        // The SUB went out, then the PING that confirms it; the server holds that PONG, so nothing may be ready.
        #expect(try await eventually { server.pings(after: subject) >= 1 } != nil, "\(server.received)")
        #expect(!first.withLock { $0 })
        // A second connection of the same user while the SUB is unconfirmed waits for the same PONG, no new SUB.
        relay.userInterest(appId: 7, userId: "alice", present: true)
        relay.whenReceiving(appId: 7, userId: "alice") { second.withLock { $0 = true } }
        #expect(!second.withLock { $0 })
        #expect(server.received.components(separatedBy: "SUB \(subject) ").count - 1 == 1)

        try server.release(1)
        #expect(try await eventually { first.withLock { $0 } && second.withLock { $0 } } != nil)

        // Confirmed: a third connection is told at once, with no flush of its own.
        let pings = server.pings(after: subject)
        let third = Mutex(false)
        relay.userInterest(appId: 7, userId: "alice", present: true)
        relay.whenReceiving(appId: 7, userId: "alice") { third.withLock { $0 = true } }
        #expect(third.withLock { $0 })
        #expect(server.pings(after: subject) == pings)
        #expect(!log.capturedText.contains("did not confirm"))
        await stop()
    }

    @Test func aUserWithoutSubscriptionHereIsNotWaitedFor() async throws {
        let server = try await HeldPongNATSServer()
        defer { server.remove() }
        let (relay, _, stop) = try await startRelay(server, confirmTimeout: .seconds(60))
        let ready = Mutex(false)
        relay.whenReceiving(appId: 7, userId: "nobody") { ready.withLock { $0 = true } }
        #expect(ready.withLock { $0 })
        await stop()
    }

    @Test func aConfirmationThatDoesNotComeEndsAtTheBound() async throws {
        let server = try await HeldPongNATSServer()
        defer { server.remove() }
        let (relay, log, stop) = try await startRelay(server, confirmTimeout: .milliseconds(200))
        let subject = Self.subjects.user(appId: 7, userId: "bob")
        let ready = Mutex(false)
        relay.userInterest(appId: 7, userId: "bob", present: true)
        relay.whenReceiving(appId: 7, userId: "bob") { ready.withLock { $0 = true } }
        // The PONG never comes: the bound lets the connection go, and says so.
        #expect(try await eventually { ready.withLock { $0 } } != nil)
        #expect(server.pings(after: subject) >= 1)
        #expect(log.capturedText.contains("NATS did not confirm a relay subscription in time"))
        // Let go is let go: a later connection of the same user does not wait again.
        let later = Mutex(false)
        relay.userInterest(appId: 7, userId: "bob", present: true)
        relay.whenReceiving(appId: 7, userId: "bob") { later.withLock { $0 = true } }
        #expect(later.withLock { $0 })
        await stop()
    }

    @Test func connectionsThatLeaveBeforeTheConfirmationAreLetGo() async throws {
        let server = try await HeldPongNATSServer()
        defer { server.remove() }
        let (relay, _, stop) = try await startRelay(server, confirmTimeout: .seconds(60))
        let subject = Self.subjects.user(appId: 7, userId: "carol")
        let ready = Mutex(false)
        relay.userInterest(appId: 7, userId: "carol", present: true)
        relay.whenReceiving(appId: 7, userId: "carol") { ready.withLock { $0 = true } }
        #expect(try await eventually { server.pings(after: subject) >= 1 } != nil)
        // The last connection of the user closes: the subscription goes, and with it what waited on it.
        relay.userInterest(appId: 7, userId: "carol", present: false)
        #expect(ready.withLock { $0 })
        #expect(try await eventually { server.received.contains("UNSUB ") } != nil)
        await stop()
    }

    /// End to end: a new connection gets its `hello` at once, but its requests (the sync it runs after the hello)
    /// are answered only once NATS confirmed the user's subscription, so that sync cannot miss an event relayed
    /// meanwhile.
    @Test func theGatewayAnswersOnceTheUsersEventsReachItsInstance() async throws {
        let server = try await HeldPongNATSServer()
        defer { server.remove() }
        try await withLiveApp(
            environment: ["PARLEY_RELAY": server.url],
            configure: { configuration in
                // The bound on the confirmation; long, so that only the PONG lets the requests through here.
                guard case .nats(var nats) = configuration.realtime.relay else { return }
                nats.connectTimeout = .seconds(60)
                nats.drainTimeout = .milliseconds(100)
                configuration.realtime.relay = .nats(nats)
            }
        ) { live in
            let (app, _) = try await live.createApp(name: "Held PONG")
            let alice = try await MessagingFixture(live: live, appKey: app.appKey, appId: app.id).users(1)[0]
            let socket = try await onDedicatedThread {
                try WebSocketClient(
                    port: live.port, path: "/ws", headers: [("Authorization", "Bearer \(alice.imToken)")],
                    timeout: .seconds(10))
            }
            defer { socket.disconnect() }
            guard case .text(let hello)? = try await Self.nextEvent(socket, within: .seconds(10)) else {
                Issue.record("no hello")
                return
            }
            #expect(IMTestClient.decode(hello)?["type"] as? String == "hello")
            let subject = Self.subjects.user(appId: app.id, userId: alice.userId)
            #expect(try await eventually { server.pings(after: subject) >= 1 } != nil, "\(server.received)")

            // The confirming PONG is held, so the request waits: a second passes with no answer.
            try socket.send(text: #"{"type":"ping","reqId":"early","data":{}}"#)
            #expect(try await Self.nextEvent(socket, within: .seconds(1)) == nil)
            try server.release(1)
            guard case .text(let answer)? = try await Self.nextEvent(socket, within: .seconds(10)) else {
                Issue.record("no answer once NATS confirmed the subscription")
                return
            }
            let frame = IMTestClient.decode(answer)
            #expect(frame?["type"] as? String == "ack")
            #expect(frame?["reqId"] as? String == "early")
        }
    }

    /// The next event that is not the server's heartbeat ping, or nil when none came within `window`.
    private static func nextEvent(_ socket: WebSocketClient, within window: Duration) async throws
        -> WebSocketClient.Event?
    {
        try await onDedicatedThread {
            let deadline = ContinuousClock.now + window
            while true {
                do {
                    let event = try socket.receiveEvent(timeout: max(.zero, deadline - ContinuousClock.now))
                    if case .ping = event { continue }
                    return event
                } catch let error as WebSocketClientError {
                    if case .timeout = error.kind { return nil }
                    throw error
                }
            }
        }
    }
}
