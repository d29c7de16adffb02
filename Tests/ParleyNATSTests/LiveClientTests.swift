import Glibc
import ParleyNATS
import ParleyTestSupport
import Testing

/// The client against a real nats-server on 127.0.0.1. Every wait has a deadline (`eventually`).
@Suite(.serialized, .enabled(if: NATSTestServer.executable != nil, NATSTestServer.skipReason))
struct LiveClientTests {
    private func waitConnected(_ events: EventRecorder, _ name: String = "client") async throws {
        let waited = try await eventually(timeout: .seconds(15)) { events.connected }
        try #require(waited != nil, "\(name) did not connect: \(events.all)")
    }

    @Test func deliversAPublishToASubscriberOnAnotherConnection() async throws {
        let server = try await NATSTestServer()
        defer { server.remove() }
        let (subscriber, subscriberEvents) = try startClient(server.url)
        let (publisher, publisherEvents) = try startClient(server.url)
        try await waitConnected(subscriberEvents, "subscriber")
        try await waitConnected(publisherEvents, "publisher")
        let inbox = Inbox()
        let sid = try subscriber.subscribe(subject: "greet.*") { inbox.add($0) }
        #expect(await subscriber.flush())
        try publisher.publish(subject: "greet.alice", replyTo: "answers.1", payload: Array("hello".utf8))
        #expect(try await eventually { inbox.count == 1 } != nil)
        let message = try #require(inbox.all.first)
        #expect(message.subject == "greet.alice")
        #expect(message.replyTo == "answers.1")
        #expect(message.subscription == sid)
        #expect(message.payload == Array("hello".utf8))
        #expect(message.headers == nil)
        await subscriber.close()
        await publisher.close()
        #expect(subscriberEvents.closed == .closed(nil))
        #expect(subscriber.statistics.received == 1)
        #expect(publisher.statistics.published == 1)
    }

    @Test func givesEachMessageOfAQueueGroupToOneMember() async throws {
        let server = try await NATSTestServer()
        defer { server.remove() }
        let (first, firstEvents) = try startClient(server.url)
        let (second, secondEvents) = try startClient(server.url)
        let (publisher, publisherEvents) = try startClient(server.url)
        for events in [firstEvents, secondEvents, publisherEvents] { try await waitConnected(events) }
        let firstInbox = Inbox()
        let secondInbox = Inbox()
        try first.subscribe(subject: "work", queue: "workers") { firstInbox.add($0) }
        try second.subscribe(subject: "work", queue: "workers") { secondInbox.add($0) }
        #expect(await first.flush())
        #expect(await second.flush())
        for index in 0..<200 { try publisher.publish(subject: "work", payload: Array("\(index)".utf8)) }
        #expect(try await eventually { firstInbox.count + secondInbox.count == 200 } != nil)
        // Each message once: together they hold every payload exactly once.
        #expect(Set(firstInbox.payloads + secondInbox.payloads).count == 200)
        #expect(firstInbox.count > 0 && secondInbox.count > 0, "\(firstInbox.count) / \(secondInbox.count)")
        for client in [first, second, publisher] { await client.close() }
    }

    @Test func carriesAOneMegabytePayloadAndRefusesALargerOneBeforeSending() async throws {
        let server = try await NATSTestServer()
        defer { server.remove() }
        let (client, events) = try startClient(server.url)
        try await waitConnected(events)
        let inbox = Inbox()
        try client.subscribe(subject: "big") { inbox.add($0) }
        var random = SplitMix64(seed: 1)
        let payload = (0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &random) }
        let result = await client.withClient { $0.publish(subject: "big", payload: payload) }
        #expect(result == .sent)
        #expect(try await eventually(timeout: .seconds(20)) { inbox.count == 1 } != nil)
        #expect(inbox.all.first?.payload == payload)
        let tooLarge = await client.withClient { $0.publish(subject: "big", payload: payload + [0]) }
        #expect(tooLarge == .rejected(.payloadTooLarge(size: (1 << 20) + 1, limit: 1 << 20)))
        #expect(events.disconnections == 0)
        await client.close()
    }

    @Test func deliversTenThousandSmallMessagesInOrder() async throws {
        let server = try await NATSTestServer()
        defer { server.remove() }
        let (subscriber, subscriberEvents) = try startClient(server.url)
        let (publisher, publisherEvents) = try startClient(server.url)
        try await waitConnected(subscriberEvents)
        try await waitConnected(publisherEvents)
        let inbox = Inbox()
        try subscriber.subscribe(subject: "seq") { inbox.add($0) }
        #expect(await subscriber.flush())
        // One loop turn publishes all of them: they leave in large writes and arrive in large reads.
        let results = await publisher.withClient { client in
            (0..<10_000).map { client.publish(subject: "seq", payload: Array(String($0).utf8)) }
        }
        #expect(results.allSatisfy { $0 == .sent })
        #expect(try await eventually(timeout: .seconds(30)) { inbox.count == 10_000 } != nil, "\(inbox.count)")
        #expect(inbox.payloads == (0..<10_000).map(String.init))
        await subscriber.close()
        await publisher.close()
    }

    @Test func reconnectsAfterARestartResubscribesAndSendsWhatWasHeld() async throws {
        let server = try await NATSTestServer()
        defer { server.remove() }
        let (client, events) = try startClient(server.url)
        try await waitConnected(events)
        let inbox = Inbox()
        try client.subscribe(subject: "restart") { inbox.add($0) }
        try client.publish(subject: "restart", payload: Array("before".utf8))
        #expect(try await eventually { inbox.count == 1 } != nil)

        server.stop()
        #expect(try await eventually { events.disconnections == 1 } != nil, "\(events.all)")
        let held = await client.withClient { client in
            (1...5).map { client.publish(subject: "restart", payload: Array("held \($0)".utf8)) }
        }
        #expect(held == Array(repeating: .pending, count: 5))
        try await server.start()

        #expect(try await eventually(timeout: .seconds(15)) { events.reconnections.count == 1 } != nil, "\(events.all)")
        #expect(events.reconnections.first?.possiblyLostMessages == true)
        #expect(try await eventually { inbox.count == 6 } != nil, "\(inbox.payloads)")
        #expect(inbox.payloads == ["before", "held 1", "held 2", "held 3", "held 4", "held 5"])
        #expect(client.statistics.reconnects == 1)
        #expect(client.statistics.dropped == 0)
        await client.close()
    }

    @Test func dropsAndCountsWhatOverflowsThePendingBufferDuringALongOutage() async throws {
        let server = try await NATSTestServer()
        defer { server.remove() }
        // "PUB p 20\r\n" + 20 bytes + CRLF: 32 bytes each, so 31 fit in 1,000.
        let (client, events) = try startClient(server.url, pendingBufferBytes: 1000)
        try await waitConnected(events)
        let inbox = Inbox()
        try client.subscribe(subject: "p") { inbox.add($0) }
        #expect(await client.flush())

        server.stop()
        #expect(try await eventually { events.disconnections == 1 } != nil)
        let payload = Array(repeating: UInt8(ascii: "x"), count: 20)
        let results = await client.withClient { client in
            (0..<200).map { _ in client.publish(subject: "p", payload: payload) }
        }
        #expect(results.filter { $0 == .pending }.count == 31)
        #expect(results.filter { $0 == .dropped(.pendingBufferFull) }.count == 169)
        #expect(events.count { $0 == .lost(.pendingBufferFull) } == 1)
        #expect(client.statistics.dropped == 169)

        try await server.start()
        #expect(try await eventually(timeout: .seconds(15)) { events.reconnections.count == 1 } != nil)
        #expect(events.reconnections.first?.possiblyLostMessages == true)
        #expect(try await eventually { inbox.count == 31 } != nil, "\(inbox.count)")
        await client.close()
    }

    @Test func closesWithAClearErrorWhenTheTokenIsRefused() async throws {
        let server = try await NATSTestServer(token: "s3cret")
        defer { server.remove() }
        let (refused, refusedEvents) = try startClient("nats://wrong@127.0.0.1:\(server.port)")
        let (anonymous, anonymousEvents) = try startClient(server.url)
        for events in [refusedEvents, anonymousEvents] {
            #expect(try await eventually(timeout: .seconds(15)) { events.closed != nil } != nil, "\(events.all)")
            #expect(events.closed == .closed(.server(NATSServerError(message: "Authorization Violation"))))
            #expect(!events.connected)
        }
        let (accepted, acceptedEvents) = try startClient("nats://s3cret@127.0.0.1:\(server.port)")
        try await waitConnected(acceptedEvents)
        let inbox = Inbox()
        try accepted.subscribe(subject: "auth") { inbox.add($0) }
        try accepted.publish(subject: "auth", payload: [1])
        #expect(try await eventually { inbox.count == 1 } != nil)
        for client in [refused, anonymous, accepted] { await client.close() }
    }

    @Test func failsOverToTheNextServerInTheList() async throws {
        let first = try await NATSTestServer()
        let second = try await NATSTestServer()
        defer {
            first.remove()
            second.remove()
        }
        let (client, events) = try startClient("\(first.url),\(second.url)")
        try await waitConnected(events)
        #expect(events.all.first == .connected(server: first.eventName))
        let inbox = Inbox()
        try client.subscribe(subject: "failover") { inbox.add($0) }
        #expect(await client.flush())

        first.stop()
        #expect(try await eventually(timeout: .seconds(15)) { events.reconnections.count == 1 } != nil, "\(events.all)")
        #expect(events.reconnections.first?.server == second.eventName)
        try client.publish(subject: "failover", payload: Array("via second".utf8))
        #expect(try await eventually { inbox.count == 1 } != nil)
        #expect(inbox.payloads == ["via second"])
        await client.close()
    }

    @Test func keepsTryingWhileNoServerIsUpAndConnectsWhenOneStarts() async throws {
        let server = try await NATSTestServer()
        defer { server.remove() }
        server.stop()
        let (client, events) = try startClient(server.url)
        let pending = await client.withClient { $0.publish(subject: "late", payload: [1]) }
        #expect(pending == .pending)
        #expect(try await eventually { events.failedAttempts >= 3 } != nil)
        #expect(!events.connected)
        try await server.start()
        try await waitConnected(events)
        #expect(client.statistics.published == 1)
        await client.close()
        #expect(await client.withClient { $0.publish(subject: "late", payload: [1]) } == .rejected(.closed))
    }
}

/// HPUB from a raw connection (this client does not publish headers), so HMSG comes from a real server.
@Suite(.serialized, .enabled(if: NATSTestServer.executable != nil, NATSTestServer.skipReason))
struct LiveHeaderTests {
    /// Sends `text` on a plain blocking socket and waits for the server's PONG to the PING at its end.
    private func sendRaw(_ text: String, port: Int) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(connected == 0)
        let bytes = Array(text.utf8)
        try #require(bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count)
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: received, as: UTF8.self).contains("PONG\r\n") {
            let count = recv(fd, &chunk, chunk.count, 0)
            try #require(count > 0, "no PONG: \(String(decoding: received, as: UTF8.self))")
            received += chunk[0..<count]
        }
    }

    @Test func handsOverHeadersToAClientThatAskedForThemAndPlainMessagesToOneThatDidNot() async throws {
        let server = try await NATSTestServer()
        defer { server.remove() }
        let (withHeaders, withEvents) = try startClient(server.url) { $0.headers = true }
        let (plain, plainEvents) = try startClient(server.url)
        #expect(try await eventually { withEvents.connected && plainEvents.connected } != nil)
        let headered = Inbox()
        let stripped = Inbox()
        try withHeaders.subscribe(subject: "h") { headered.add($0) }
        try plain.subscribe(subject: "h") { stripped.add($0) }
        #expect(await withHeaders.flush())
        #expect(await plain.flush())

        let block = "NATS/1.0\r\nTrace-Id: 42\r\n\r\n"
        let hpub = "HPUB h \(block.utf8.count) \(block.utf8.count + 5)\r\n\(block)hello\r\n"
        try sendRaw(
            #"CONNECT {"verbose":false,"headers":true,"protocol":1}"# + "\r\n" + hpub + "PING\r\n", port: server.port)

        #expect(try await eventually { headered.count == 1 && stripped.count == 1 } != nil)
        #expect(headered.all.first?.headers?.values(for: "trace-id") == ["42"])
        #expect(headered.all.first?.payload == Array("hello".utf8))
        #expect(stripped.all.first?.headers == nil)
        #expect(stripped.all.first?.payload == Array("hello".utf8))
        await withHeaders.close()
        await plain.close()
    }
}
