import Foundation
import ParleyTestSupport
import Testing

@testable import ParleyHTTP

/// Accepted connections end up spread evenly over the event loops, whichever listener the kernel picked.
struct AcceptBalanceTests {
    @Test func connectionsAreSpreadOverTheLoops() async throws {
        let live = try await LiveServer(routes: standardRoutes)
        let port = live.port
        let clients = try await onDedicatedThread { () -> [RawHTTPClient] in
            var clients: [RawHTTPClient] = []
            for _ in 0..<41 {
                let client = try RawHTTPClient(port: port)
                // One answered request: the connection sits on its loop before the next one opens.
                try client.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
                guard try client.readResponse().status == 200 else { throw CancellationError() }
                clients.append(client)
            }
            return clients
        }
        let counts = live.server.connectionsPerLoop
        #expect(counts.reduce(0, +) == 41)
        #expect(counts.max()! - counts.min()! <= 1, "\(counts)")
        for client in clients { client.close() }
        await live.stop()
    }
}
