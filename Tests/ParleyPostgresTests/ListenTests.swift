import ParleyTestSupport
import Testing

@testable import ParleyPostgres

@Suite struct ListenTests {
    @Test func deliversPayloadsInOrder() async throws {
        try await withTestClient { client, _ in
            let stream = client.listen("chat_events")
            #expect(await client.waitUntilListening("chat_events", timeout: .seconds(30)))
            for i in 0..<50 { try await client.notify("chat_events", payload: "message \(i)") }
            var received: [String] = []
            for await event in stream {
                guard case .notification(let channel, let payload) = event else { continue }
                #expect(channel == "chat_events")
                received.append(payload)
                if received.count == 50 { break }
            }
            #expect(received == (0..<50).map { "message \($0)" })
        }
    }

    @Test func notificationsOnlyReachTheirChannel() async throws {
        try await withTestClient { client, _ in
            let a = client.listen("Channel A")
            let b = client.listen("channel_b")
            #expect(await client.waitUntilListening("Channel A", timeout: .seconds(30)))
            #expect(await client.waitUntilListening("channel_b", timeout: .seconds(30)))
            try await client.notify("channel_b", payload: "for b")
            try await client.notify("Channel A", payload: "for a")
            var iteratorA = a.makeAsyncIterator()
            var iteratorB = b.makeAsyncIterator()
            #expect(await iteratorA.next() == .notification(channel: "Channel A", payload: "for a"))
            #expect(await iteratorB.next() == .notification(channel: "channel_b", payload: "for b"))
        }
    }

    @Test func lastSubscriberLeavingUnlistens() async throws {
        try await withTestClient { client, _ in
            let kept = client.listen("kept")
            let consumer = Task {
                for await _ in client.listen("temporary") {}
            }
            #expect(await client.waitUntilListening("temporary", timeout: .seconds(30)))
            #expect(await client.waitUntilListening("kept", timeout: .seconds(30)))
            #expect(await client.session.listeningChannels() == ["kept", "temporary"])
            consumer.cancel()
            #expect(try await eventually { await client.session.listeningChannels() == ["kept"] } != nil)
            try await client.notify("kept", payload: "still here")
            var iterator = kept.makeAsyncIterator()
            #expect(await iterator.next() == .notification(channel: "kept", payload: "still here"))
        }
    }

    @Test func reconnectsAfterItsBackendIsTerminated() async throws {
        try await withTestClient { client, url in
            let stream = client.listen("presence")
            #expect(await client.waitUntilListening("presence", timeout: .seconds(30)))
            var iterator = stream.makeAsyncIterator()
            try await client.notify("presence", payload: "before")
            #expect(await iterator.next() == .notification(channel: "presence", payload: "before"))

            let pid = try #require(await client.session.backendPID())
            try await withAdminClient(url: url) { admin in
                let rows = try await admin.query("SELECT pg_terminate_backend(\(Int32(pid)))")
                #expect(try rows.first?.decode(0, as: Bool.self) == true)
            }
            #expect(await iterator.next() == .reconnected)
            let newPID = try #require(await client.session.backendPID())
            #expect(newPID != pid)
            try await client.notify("presence", payload: "after")
            #expect(await iterator.next() == .notification(channel: "presence", payload: "after"))
        }
    }

    @Test func shutdownFinishesTheStreams() async throws {
        try await withTestClient { client, _ in
            let stream = client.listen("bye")
            #expect(await client.waitUntilListening("bye", timeout: .seconds(30)))
            await client.session.shutDown()
            var count = 0
            for await _ in stream { count += 1 }
            #expect(count == 0)
        }
    }
}
