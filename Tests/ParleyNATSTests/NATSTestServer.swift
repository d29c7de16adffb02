import Foundation
import ParleyNATS
import ParleyNet
import ParleyObservability
import ParleyTestSupport
import Synchronization
import Testing

/// A `nats-server` (Debian's package; scripts/test installs it) on 127.0.0.1 for one test, stopped and started
/// again on the same port when a test needs an outage.
final class NATSTestServer: Sendable {
    static let executable = ChildProcess.find("nats-server")
    static let skipReason: Comment = "nats-server not found: apt-get install nats-server (scripts/test installs it)"

    let port: Int
    private let arguments: [String]
    private let logPath: String
    private let process = Mutex<ChildProcess?>(nil)

    var url: String { "nats://127.0.0.1:\(port)" }
    /// How the client names this server in its events.
    var eventName: String { "nats://127.0.0.1:\(port)" }

    init(token: String? = nil) async throws {
        port = ChildProcess.unusedPort()
        var arguments = ["-a", "127.0.0.1", "-p", "\(port)"]
        if let token { arguments += ["--auth", token] }
        self.arguments = arguments
        logPath = NSTemporaryDirectory() + "parley-nats-\(port)-\(UUID().uuidString).log"
        try await start()
    }

    func start() async throws {
        let executable = try #require(Self.executable)
        let child = try ChildProcess(executable: executable, arguments: arguments, outputPath: logPath)
        process.withLock { $0 = child }
        try await child.waitUntilListeningOrStop(port: port, timeout: .seconds(20))
    }

    /// SIGTERM (the server closes its clients' connections), then waits for it to exit.
    func stop() {
        let child = process.withLock { current -> ChildProcess? in
            defer { current = nil }
            return current
        }
        child?.stop()
    }

    var log: String { process.withLock { $0?.output() } ?? "" }

    func remove() {
        stop()
        try? FileManager.default.removeItem(atPath: logPath)
    }
}

/// Everything a client reported, for tests to wait on.
final class EventRecorder: Sendable {
    private let events = Mutex<[NATSClientEvent]>([])
    /// The client's log lines.
    let log = LogSink(capturingAt: .debug)

    /// Connection attempts that failed so far (the client logs each).
    var failedAttempts: Int { log.capturedText.components(separatedBy: "NATS connection attempt failed").count - 1 }

    func record(_ event: NATSClientEvent) { events.withLock { $0.append(event) } }

    var all: [NATSClientEvent] { events.withLock { $0 } }

    func contains(_ predicate: (NATSClientEvent) -> Bool) -> Bool { all.contains(where: predicate) }

    func count(_ predicate: (NATSClientEvent) -> Bool) -> Int { all.filter(predicate).count }

    var connected: Bool { contains { if case .connected = $0 { true } else { false } } }
    var disconnections: Int { count { if case .disconnected = $0 { true } else { false } } }
    var reconnections: [(server: String, possiblyLostMessages: Bool)] {
        all.compactMap {
            if case .reconnected(let server, let possiblyLost) = $0 { (server, possiblyLost) } else { nil }
        }
    }
    var closed: NATSClientEvent? { all.first { if case .closed = $0 { true } else { false } } }
}

/// Messages a subscription handler received, in order.
final class Inbox: Sendable {
    private let messages = Mutex<[NATSMessage]>([])

    func add(_ message: NATSMessage) { messages.withLock { $0.append(message) } }

    var all: [NATSMessage] { messages.withLock { $0 } }
    var count: Int { messages.withLock { $0.count } }
    var payloads: [String] { all.map { String(decoding: $0.payload, as: UTF8.self) } }
}

/// A client on one of the test loops with short backoffs, recording its events.
func startClient(
    _ urls: String, pendingBufferBytes: Int = 1 << 20, configure: (inout NATSConfiguration) -> Void = { _ in }
) throws -> (client: NATSClientHandle, events: EventRecorder) {
    var configuration = try NATSConfiguration(urls: urls)
    configuration.reconnectBackoffMin = .milliseconds(20)
    configuration.reconnectBackoffMax = .milliseconds(200)
    configuration.pendingBufferBytes = pendingBufferBytes
    configure(&configuration)
    let events = EventRecorder()
    let client = NATSClientHandle.start(
        configuration: configuration, loop: TestEnvironment.eventLoopGroup.next(), logger: Logger(sink: events.log)
    ) { events.record($0) }
    return (client, events)
}
