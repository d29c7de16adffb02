import Foundation
import Glibc

/// Where the chat prints, and where its commands come from. Lines go out with one `write` each (no stdio buffer),
/// so a file or a pipe sees every line as soon as it is printed, and lines from concurrent tasks never mix.
public struct Console: Sendable {
    /// A line of the conversation (stdout).
    public var say: @Sendable (String) -> Void
    /// Errors and connection notices (stderr).
    public var warn: @Sendable (String) -> Void

    public init(say: @escaping @Sendable (String) -> Void, warn: @escaping @Sendable (String) -> Void) {
        self.say = say
        self.warn = warn
    }

    public static let standard = Console(
        say: { writeLine($0, to: STDOUT_FILENO) }, warn: { writeLine($0, to: STDERR_FILENO) })

    private static func writeLine(_ line: String, to fd: Int32) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return } // a closed stdout: nothing to do
            offset += written
        }
    }

    /// Lines of stdin, read by a thread of their own (reading blocks; the cooperative pool must never block), until
    /// end of input. Works the same for a terminal and a pipe.
    public static func standardInputLines() -> AsyncStream<String> {
        let (lines, sink) = AsyncStream.makeStream(of: String.self)
        let thread = Thread {
            while let line = readLine(strippingNewline: true) { sink.yield(line) }
            sink.finish()
        }
        thread.name = "parley-chat-stdin"
        thread.start()
        return lines
    }

    /// True when stdin is a terminal (a person typing) rather than a pipe or a file.
    public static var isInteractive: Bool { isatty(STDIN_FILENO) == 1 }
}
