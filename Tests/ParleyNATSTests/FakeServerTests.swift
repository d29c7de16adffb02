import Foundation
import ParleyNATS
import ParleyTestSupport
import Testing

/// A scripted server for what a real one will not do on request: go silent after the handshake, send garbage,
/// never send INFO. Python's standard library only; one thread per connection.
private final class FakeNATSServer: Sendable {
    static let python = ChildProcess.find("python3")

    private static let script = #"""
        import socket, sys, threading
        mode, port = sys.argv[1], int(sys.argv[2])
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(8)
        def serve(connection):
            if mode != "mute":
                connection.sendall(b'INFO {"server_id":"FAKE","max_payload":1048576,"proto":1}\r\n')
            received, answered = b"", False
            while True:
                data = connection.recv(65536)
                if not data:
                    return
                received += data
                if mode != "mute" and not answered and b"PING\r\n" in received:
                    answered = True
                    connection.sendall(b"PONG\r\n" + (b"GARBAGE\r\n" if mode == "garbage" else b""))
        while True:
            connection, _ = listener.accept()
            threading.Thread(target=serve, args=(connection,), daemon=True).start()
        """#

    let port: Int
    private let process: ChildProcess
    private let logPath: String

    /// `mode`: "silent" answers the handshake's PING and nothing after; "garbage" follows its PONG with an unknown
    /// operation; "mute" accepts and says nothing.
    init(mode: String) async throws {
        let python = try #require(Self.python)
        port = ChildProcess.unusedPort()
        logPath = NSTemporaryDirectory() + "parley-fake-nats-\(port)-\(UUID().uuidString).log"
        process = try ChildProcess(
            executable: python, arguments: ["-c", Self.script, mode, "\(port)"], outputPath: logPath)
        try await process.waitUntilListeningOrStop(port: port, timeout: .seconds(20))
    }

    var url: String { "nats://127.0.0.1:\(port)" }

    func remove() {
        process.stop()
        try? FileManager.default.removeItem(atPath: logPath)
    }
}

@Suite(.serialized, .enabled(if: FakeNATSServer.python != nil, "python3 not found"))
struct FakeServerTests {
    @Test func dropsAConnectionWhoseServerStopsAnsweringPINGs() async throws {
        let server = try await FakeNATSServer(mode: "silent")
        defer { server.remove() }
        let (client, events) = try startClient(server.url) {
            $0.pingInterval = .milliseconds(100)
            $0.maxOutstandingPings = 2
            $0.drainTimeout = .milliseconds(100)
        }
        #expect(try await eventually { events.connected } != nil, "\(events.all)")
        #expect(try await eventually { events.disconnections >= 1 } != nil, "\(events.all)")
        #expect(events.all.contains(.disconnected(.staleConnection)))
        // It comes back (the fake accepts again), so the loss was not final.
        #expect(try await eventually { !events.reconnections.isEmpty } != nil, "\(events.all)")
        await client.close()
    }

    @Test func closesAtTheDrainDeadlineWhenTheServerNeverConfirms() async throws {
        let server = try await FakeNATSServer(mode: "silent")
        defer { server.remove() }
        let (client, events) = try startClient(server.url) { $0.drainTimeout = .milliseconds(200) }
        #expect(try await eventually { events.connected } != nil, "\(events.all)")
        await client.close()
        #expect(events.closed == .closed(.drainTimedOut))
    }

    @Test func replacesAConnectionWhoseServerBreaksTheProtocol() async throws {
        let server = try await FakeNATSServer(mode: "garbage")
        defer { server.remove() }
        let (client, events) = try startClient(server.url)
        #expect(try await eventually { events.disconnections >= 1 } != nil, "\(events.all)")
        #expect(events.all.contains(.disconnected(.protocolError(.unknownOperation("GARBAGE")))))
        #expect(try await eventually { !events.reconnections.isEmpty } != nil, "\(events.all)")
        await client.close()
    }

    @Test func givesUpOnAnAttemptThatNeverGetsINFOAndKeepsTrying() async throws {
        let server = try await FakeNATSServer(mode: "mute")
        defer { server.remove() }
        let (client, events) = try startClient(server.url) { $0.connectTimeout = .milliseconds(200) }
        #expect(try await eventually { events.failedAttempts >= 2 } != nil)
        #expect(events.log.capturedText.contains("timed out"))
        #expect(!events.connected)
        await client.close()
        #expect(events.closed == .closed(nil))
    }
}
