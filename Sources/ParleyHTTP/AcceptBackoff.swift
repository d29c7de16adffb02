import Glibc

/// What a listener does after `accept4` fails (pure; `LoopServer` runs the actions).
///
/// A failure either concerns the one connection that was pending (the peer reset it first, or a network error
/// the kernel reports through accept: accept(2), "Error handling") and the next may succeed, or the process
/// itself: out of descriptors (EMFILE), the system out of them (ENFILE) or of memory. The listener stays readable
/// in the second case, so a level-triggered loop that retried at once would spin at 100% CPU while nothing
/// changes; it stops watching the listener for a pause instead (10 ms doubling to 1 s, reset by the next accepted
/// connection), the way SwiftNIO's accept backoff and Go's `net/http` do. Pending connections wait in the
/// backlog meanwhile.
struct AcceptBackoff: Sendable {
    enum Action: Equatable, Sendable {
        /// Try the next pending connection.
        case acceptNext
        /// Nothing is pending: wait for the listener to be readable again.
        case wait
        /// Stop watching the listener for this long.
        case pause(Duration)
    }

    static let firstPause: Duration = .milliseconds(10)
    static let longestPause: Duration = .seconds(1)

    private(set) var nextPause: Duration = AcceptBackoff.firstPause

    mutating func connectionAccepted() {
        nextPause = Self.firstPause
    }

    mutating func acceptFailed(errno code: Int32) -> Action {
        switch code {
        case EAGAIN, EWOULDBLOCK:
            return .wait
        case EINTR, ECONNABORTED, EPROTO, EPERM, ENETDOWN, ENOPROTOOPT, EHOSTDOWN, ENONET, EHOSTUNREACH, EOPNOTSUPP,
            ENETUNREACH:
            return .acceptNext
        default:
            // EMFILE, ENFILE, ENOBUFS, ENOMEM, and anything unexpected: retrying at once cannot help.
            let pause = nextPause
            nextPause = min(nextPause * 2, Self.longestPause)
            return .pause(pause)
        }
    }
}
