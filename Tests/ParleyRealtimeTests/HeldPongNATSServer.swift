import Foundation
import ParleyTestSupport
import Synchronization
import Testing

/// A scripted NATS server that confirms the handshake's PING at once but holds the PONG of every later PING (a
/// client's flush) until the test releases it: what a real server does on a slow link, on request. It records the
/// bytes it read. Python's standard library only; one thread per connection.
final class HeldPongNATSServer: Sendable {
    static let python = ChildProcess.find("python3")

    private static let script = #"""
        import os, socket, sys, threading
        port, control, record = int(sys.argv[1]), sys.argv[2], sys.argv[3]
        lock = threading.Lock()
        def released():
            try:
                with open(control) as f:
                    return int(f.read().strip() or "0")
            except (OSError, ValueError):
                return 0
        def serve(connection):
            connection.sendall(b'INFO {"server_id":"HELD","max_payload":1048576,"proto":1}\r\n')
            connection.settimeout(0.01)
            buffer, pings, owed, sent = b"", 0, 0, 0
            while True:
                try:
                    data = connection.recv(65536)
                    if not data:
                        return
                except socket.timeout:
                    data = b""
                except OSError:
                    return
                if data:
                    with lock, open(record, "ab") as f:
                        f.write(data)
                    buffer += data
                while True:
                    end = buffer.find(b"\r\n")
                    if end < 0:
                        break
                    line = buffer[:end]
                    if line.startswith((b"PUB ", b"HPUB ")):
                        size = int(line.split()[-1])
                        if len(buffer) < end + 2 + size + 2:
                            break
                        buffer = buffer[end + 2 + size + 2:]
                        continue
                    buffer = buffer[end + 2:]
                    if line == b"PING":
                        pings += 1
                        if pings == 1:
                            connection.sendall(b"PONG\r\n")
                        else:
                            owed += 1
                # Held PONGs go out in order, as many in all as the control file says.
                while owed and sent < released():
                    connection.sendall(b"PONG\r\n")
                    owed -= 1
                    sent += 1
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(8)
        while True:
            connection, _ = listener.accept()
            threading.Thread(target=serve, args=(connection,), daemon=True).start()
        """#

    let port: Int
    private let process: ChildProcess
    private let directory: String

    init() async throws {
        let python = try #require(Self.python)
        port = ChildProcess.unusedPort()
        directory = NSTemporaryDirectory() + "parley-held-nats-\(port)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: directory + "/record", contents: nil)
        process = try ChildProcess(
            executable: python,
            arguments: ["-c", Self.script, "\(port)", directory + "/control", directory + "/record"],
            outputPath: directory + "/log")
        try await process.waitUntilListeningOrStop(port: port, timeout: .seconds(20))
    }

    var url: String { "nats://127.0.0.1:\(port)" }

    /// Everything clients wrote so far.
    var received: String { (try? String(contentsOfFile: directory + "/record", encoding: .utf8)) ?? "" }

    /// The PINGs read after the SUB of `subject` (0 when it has not come).
    func pings(after subject: String) -> Int {
        let text = received
        guard let sub = text.range(of: "SUB \(subject) ") else { return 0 }
        return text[sub.upperBound...].components(separatedBy: "PING\r\n").count - 1
    }

    /// Lets the first `count` held PONGs (in all) go out.
    func release(_ count: Int) throws {
        try "\(count)".write(toFile: directory + "/control", atomically: true, encoding: .utf8)
    }

    func remove() {
        process.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
