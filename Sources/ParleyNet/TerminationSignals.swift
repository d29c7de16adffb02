import CParleyLinux
import Foundation
import Glibc

nonisolated(unsafe) private var signalWriteFD: Int32 = -1
nonisolated(unsafe) private var signalReadFD: Int32 = -1

/// SIGINT / SIGTERM as an awaitable event, through the self-pipe trick: the handler only writes one
/// byte (async-signal-safe), whichever thread the kernel picked, and a plain thread reads it.
public enum TerminationSignals {
    /// Installs the handlers once; call early in `main`.
    public static func install() {
        guard signalWriteFD < 0 else { return }
        var fds: [Int32] = [0, 0]
        guard pipe2(&fds, O_CLOEXEC) == 0 else { return }
        signalReadFD = fds[0]
        signalWriteFD = fds[1]
        for signo in [SIGINT, SIGTERM] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signo in
                var byte = UInt8(truncatingIfNeeded: signo)
                _ = write(signalWriteFD, &byte, 1)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(signo, &action, nil)
        }
    }

    /// Waits for the next SIGINT or SIGTERM and returns its number.
    public static func next() async -> Int32 {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                var byte: UInt8 = 0
                while true {
                    let n = read(signalReadFD, &byte, 1)
                    if n == 1 { break }
                    if n < 0 && errno == EINTR { continue }
                    byte = UInt8(SIGTERM)
                    break
                }
                continuation.resume(returning: Int32(byte))
            }
            thread.name = "parley-signals"
            thread.start()
        }
    }
}
