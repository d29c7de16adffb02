import ParleyNet
import ParleyObservability

/// Shared fixtures for test targets.
public enum TestEnvironment {
    /// Two event loops shared by every test in the process (tests never shut it down).
    public static let eventLoopGroup: EventLoopGroup = {
        do {
            return try EventLoopGroup(threads: 2)
        } catch {
            fatalError("cannot start the test event loops: \(error)")
        }
    }()

    /// A logger whose output stays in memory; read it with `sink.capturedText`.
    public static func capturingLogger(level: LogLevel = .debug) -> (logger: Logger, sink: LogSink) {
        let sink = LogSink(capturingAt: level)
        return (Logger(sink: sink), sink)
    }
}
