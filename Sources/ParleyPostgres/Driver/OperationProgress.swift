/// Where a connection's current operation is in the protocol, and what the server answered first: the state from
/// which follows whether an operation that got no answer may be sent again on another connection
/// (`isSafeToRetry`). Pure: `ConnectionDriver` reports what it sent and the byte it peeked; nothing here touches
/// libpq or the socket.
struct OperationProgress {
    /// The protocol step of the operation in flight.
    enum Step: Hashable {
        /// Evicting a cached statement (`DEALLOCATE`) before preparing `thenPrepare`.
        case deallocating(thenPrepare: String)
        /// Preparing the statement (Parse); its Execute has not been sent.
        case preparing(String)
        /// Bind + Execute of a prepared statement, or an unnamed Parse/Bind/Execute.
        case executing
        /// The simple-query protocol (possibly several statements).
        case simple
    }

    /// How an operation ended without an answer.
    enum Interruption: Hashable {
        /// It never left this client: queued behind another one, or the connection was not ready.
        case notSent
        /// `PQsend*` or `PQflush` failed and the connection is broken: its Sync never reached the server, and a
        /// statement the server does not see completed is not committed.
        case sendFailed
        /// The connection died while the operation was in flight; `serverErrorSQLState`: the error the server
        /// sent for it, if any.
        case connectionLost(serverErrorSQLState: String?)
    }

    private(set) var step: Step = .simple
    /// The connection passed the reuse check (`isAliveForReuse`): note the next statement's first response byte.
    private var probeArmed = false
    /// The driver peeks the first byte of the answer at the next readable (`firstResponseByteArrived`).
    private(set) var awaitsFirstResponseByte = false
    private var firstResponseByte: UInt8?

    // MARK: Events

    /// The connection is taken from the idle list after its reuse check: the next statement's first response
    /// byte will tell "the backend died before reading it" from "it died while running it".
    mutating func connectionCheckedForReuse() {
        probeArmed = true
    }

    /// An operation starts at `step`. `firstResponseObservable`: the statement goes out as Bind/Execute of a
    /// cached statement on plain TCP with nothing left unflushed before it, so the first byte on the socket is the
    /// server's first answer to it (with TLS the byte says nothing about the protocol).
    mutating func operationStarted(at step: Step, firstResponseObservable: Bool) {
        self.step = step
        firstResponseByte = nil
        awaitsFirstResponseByte = probeArmed && firstResponseObservable && step == .executing
        probeArmed = false
    }

    /// The operation moved on (deallocated, then prepared, then executing).
    mutating func stepAdvanced(to step: Step) {
        self.step = step
    }

    /// The driver peeked at the socket: `byte` is the first byte of the server's answer (nil: none was there).
    mutating func firstResponseByteArrived(_ byte: UInt8?) {
        awaitsFirstResponseByte = false
        firstResponseByte = byte
    }

    // MARK: Decision

    /// Whether the interrupted operation certainly did not run, so a pooled query may go to another connection.
    ///
    /// In flight, that holds when its Execute had not been sent yet (still deallocating or preparing), or when the
    /// server's first answer was an ErrorResponse of class 57P (shutdown, terminated) where the extended protocol
    /// answers a Bind it has read with BindComplete first: the backend was leaving before it read the statement.
    /// A statement killed while it runs is not retried: it may be the very one an administrator stopped. The
    /// simple protocol gives no such evidence, so its statements are never retried once sent.
    func isSafeToRetry(after interruption: Interruption) -> Bool {
        switch interruption {
        case .notSent, .sendFailed:
            return true
        case .connectionLost(let sqlState):
            switch step {
            case .deallocating, .preparing:
                return true
            case .executing:
                return firstResponseByte == UInt8(ascii: "E") && sqlState?.hasPrefix("57P") == true
            case .simple:
                return false
            }
        }
    }
}
