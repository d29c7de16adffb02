import CLibPQ
import Glibc
import ParleyNet
import ParleyObservability

/// Drives one libpq connection without ever blocking: `PQconnectStart`/`PQconnectPoll` to connect,
/// then `PQsetnonblocking`, `PQsend*` + `PQflush`, and `PQconsumeInput`/`PQisBusy`/`PQgetResult` when
/// the event loop reports the socket readable. One operation is in flight at a time; the rest queue.
///
/// Loop-confined: every method runs on `loop`'s thread, so it needs no locks and is not `Sendable`.
final class ConnectionDriver: IOHandler {
    enum State {
        case idle, connecting, ready, closed
    }

    let loop: EventLoop
    let id: Int
    var delegate: ConnectionDelegate?
    /// NOTIFY messages received on this connection (the listener sets it; pooled connections drop them).
    var onNotification: ((_ channel: String, _ payload: String) -> Void)?

    private(set) var state: State = .idle
    private var conn: OpaquePointer?
    private var registeredFD: Int32 = -1
    private var wantsWrite = false
    private var connectTimer: EventLoop.TimerID?

    private var statements: StatementCache
    private var queue = RingBuffer<ConnectionOperation>()
    private var current: ConnectionOperation?
    /// The current operation's protocol step and first answer: what decides whether it may be retried.
    private var progress = OperationProgress()
    private var currentResult: OpaquePointer?
    private var currentError: PostgresError?

    /// The server sent a FATAL error outside any query: it is closing this session.
    private var serverEndedSession = false

    /// Statements prepared on the server so far (for tests and diagnostics).
    private(set) var preparedCount = 0

    init(loop: EventLoop, id: Int, statementCacheCapacity: Int, delegate: ConnectionDelegate?) {
        self.loop = loop
        self.id = id
        self.statements = StatementCache(capacity: statementCacheCapacity)
        self.delegate = delegate
    }

    deinit {
        // Normally closed already (a registered driver is retained by the loop, so it cannot get here).
        if let currentResult { PQclear(currentResult) }
        if let conn { PQfinish(conn) }
    }

    var isClosed: Bool { state == .closed }
    var isReady: Bool { state == .ready }
    var isBusy: Bool { current != nil || !queue.isEmpty }
    var transactionStatus: PGTransactionStatusType { conn.map { PQtransactionStatus($0) } ?? PQTRANS_UNKNOWN }
    var backendPID: Int32 { conn.map { PQbackendPID($0) } ?? 0 }

    // MARK: Connecting

    /// Starts connecting; the delegate hears `connectionEstablished` or `failedToConnect`, never synchronously.
    /// `timeout` covers everything: DNS (on `resolver`'s helper thread), TCP, TLS and authentication.
    func connect(conninfo: String, timeout: Duration, resolver: HostResolver? = nil) {
        loop.preconditionInEventLoop()
        precondition(state == .idle)
        state = .connecting
        // Strong, not weak (docs/ARCHITECTURE.md, "No weak references to hot objects"): the timer keeps a failed
        // driver at most `timeout`.
        connectTimer = loop.scheduleTimer(after: timeout) { [self] in
            guard self.state == .connecting else { return }
            self.connectTimer = nil
            self.close(
                error: PostgresError(
                    kind: .unavailable,
                    message: "could not connect: timed out after \(timeout)"))
        }
        guard let resolver, resolver.needsResolution else {
            startConnecting(conninfo: conninfo, overrides: [])
            return
        }
        if let cached = resolver.cachedOverrides() {
            addressesResolved(cached, conninfo: conninfo)
            return
        }
        let this = UncheckedTransfer(self)
        let loop = self.loop
        resolver.resolve { result in
            loop.execute { this.value.addressesResolved(result, conninfo: conninfo) }
        }
    }

    private func addressesResolved(_ result: Result<HostResolver.Overrides, PostgresError>, conninfo: String) {
        guard state == .connecting, conn == nil else { return } // timed out or closed meanwhile
        switch result {
        case .success(let overrides):
            startConnecting(conninfo: conninfo, overrides: overrides)
        case .failure(let error):
            loop.executeInLoop { [self] in close(error: error) }
        }
    }

    private func startConnecting(conninfo: String, overrides: HostResolver.Overrides) {
        // Entries before `dbname` are defaults the connection string may override (libpq: later entries win);
        // `overrides` (resolved addresses) come after it. ISO DateStyle is what timestamp decoding expects,
        // UTF8 what String decoding expects. Keepalives and a TCP user timeout bound how long a connection to
        // a vanished host (no RST, packets dropped) can hang: about a minute instead of the kernel's hours.
        let keywords =
            [
                "client_encoding", "options", "fallback_application_name", "keepalives_idle",
                "keepalives_interval", "keepalives_count", "tcp_user_timeout", "dbname",
            ] + overrides.map(\.keyword)
        let values =
            ["UTF8", "-c DateStyle=ISO", "parley", "30", "10", "3", "60000", conninfo] + overrides.map(\.value)
        conn = withCStringArray(keywords) { keywordPointers in
            withCStringArray(values) { valuePointers in
                PQconnectStartParams(keywordPointers, valuePointers, 1)
            }
        }
        guard let conn, PQstatus(conn) != CONNECTION_BAD else {
            let error = PostgresError(kind: .unavailable, message: "could not connect: \(LibPQ.errorMessage(conn))")
            loop.executeInLoop { [self] in close(error: error) }
            return
        }
        // libpq prints notices to stderr by default; Parley keeps its output JSON-only. The receiver also
        // hears errors the server sends while no query runs: a FATAL one (backend terminated, server shutting
        // down) means this connection is finished even if the socket has not reported EOF yet.
        PQsetNoticeReceiver(
            conn,
            { context, result in
                guard let context, let result, let severity = PQresultErrorField(result, Int32(UInt8(ascii: "V")))
                else { return }
                let level = String(cString: severity)
                if level == "FATAL" || level == "PANIC" {
                    Unmanaged<ConnectionDriver>.fromOpaque(context).takeUnretainedValue().serverEndedSession = true
                }
            }, Unmanaged.passUnretained(self).toOpaque())
        // libpq: behave as if PQconnectPoll last returned PGRES_POLLING_WRITING.
        watchConnectingSocket(.writable)
    }

    private func continueConnecting() {
        guard let conn else { return }
        switch PQconnectPoll(conn) {
        case PGRES_POLLING_OK:
            connected()
        case PGRES_POLLING_READING:
            watchConnectingSocket(.readable)
        case PGRES_POLLING_WRITING:
            watchConnectingSocket(.writable)
        default:
            close(error: PostgresError(kind: .unavailable, message: "could not connect: \(LibPQ.errorMessage(conn))"))
        }
    }

    /// While connecting libpq may close its socket and open another (next address, SSL fallback), possibly
    /// under the same number, so each step re-registers instead of modifying.
    private func watchConnectingSocket(_ events: IOEvents) {
        guard let conn else { return }
        if registeredFD >= 0 {
            loop.unregister(fd: registeredFD)
            registeredFD = -1
        }
        let fd = PQsocket(conn)
        guard fd >= 0 else {
            close(error: PostgresError(kind: .unavailable, message: "could not connect: \(LibPQ.errorMessage(conn))"))
            return
        }
        do {
            try loop.register(fd: fd, events: events, handler: self)
            registeredFD = fd
        } catch {
            close(error: PostgresError(kind: .unavailable, message: "could not connect: \(error)"))
        }
    }

    private func connected() {
        guard let conn else { return }
        if let connectTimer {
            loop.cancelTimer(connectTimer)
            self.connectTimer = nil
        }
        guard PQsetnonblocking(conn, 1) == 0 else {
            close(error: PostgresError(kind: .unavailable, message: "PQsetnonblocking: \(LibPQ.errorMessage(conn))"))
            return
        }
        watchConnectingSocket(.readable)
        guard state == .connecting else { return }
        state = .ready
        delegate?.connectionEstablished(self)
    }

    // MARK: Operations

    /// Queues `operation`; it starts at once when nothing else is in flight.
    func enqueue(_ operation: ConnectionOperation) {
        guard state == .ready else {
            var error = PostgresError(kind: .unavailable, message: "the connection is closed")
            error.safeToRetry = progress.isSafeToRetry(after: .notSent)
            Self.deliver(operation.completion, .failure(error), from: self)
            return
        }
        if current == nil && queue.isEmpty {
            start(operation)
        } else {
            queue.append(operation)
        }
    }

    private func start(_ operation: ConnectionOperation) {
        current = operation
        currentError = nil
        switch operation.command {
        case .simple(let sql):
            progress.operationStarted(at: .simple, firstResponseObservable: false)
            send { conn in sql.withCString { PQsendQuery(conn, $0) } }
        case .extended(let query):
            if statements.capacity == 0 {
                progress.operationStarted(at: .executing, firstResponseObservable: false)
                sendUnnamed(query)
            } else if let name = statements.lookup(query.sql, binds: query.binds) {
                // Plain TCP only: with TLS the first byte on the socket says nothing about the protocol.
                progress.operationStarted(
                    at: .executing,
                    firstResponseObservable: !wantsWrite && conn.map { PQsslInUse($0) == 0 } == true)
                sendPrepared(name: name, query)
            } else {
                let (name, evicted) = statements.insert(query.sql, binds: query.binds)
                if let evicted {
                    progress.operationStarted(at: .deallocating(thenPrepare: name), firstResponseObservable: false)
                    send { conn in "DEALLOCATE \(evicted)".withCString { PQsendQuery(conn, $0) } }
                } else {
                    progress.operationStarted(at: .preparing(name), firstResponseObservable: false)
                    sendPrepare(name: name, query)
                }
            }
        }
    }

    private func sendPrepare(name: String, _ query: PostgresQuery) {
        preparedCount += 1
        send { conn in
            LibPQ.withParameterTypes(query.binds) { types in
                PQsendPrepare(conn, name, query.sql, Int32(query.binds.count), types)
            }
        }
    }

    private func sendPrepared(name: String, _ query: PostgresQuery) {
        send { conn in
            LibPQ.withParameters(query.binds) { count, values, lengths, formats in
                PQsendQueryPrepared(conn, name, count, values, lengths, formats, 0)
            }
        }
    }

    private func sendUnnamed(_ query: PostgresQuery) {
        send { conn in
            LibPQ.withParameterTypes(query.binds) { types in
                LibPQ.withParameters(query.binds) { count, values, lengths, formats in
                    PQsendQueryParams(conn, query.sql, count, types, values, lengths, formats, 0)
                }
            }
        }
    }

    /// Runs one `PQsend*` and flushes. A send that fails means nothing reached the server.
    private func send(_ call: (OpaquePointer) -> Int32) {
        guard let conn else { return }
        guard call(conn) == 1, flush() else {
            var error = PostgresError(kind: .unavailable, message: "could not send query: \(LibPQ.errorMessage(conn))")
            if PQstatus(conn) == CONNECTION_BAD {
                error.safeToRetry = progress.isSafeToRetry(after: .sendFailed)
                close(error: error, currentFailure: error)
            } else {
                // The connection is fine but libpq refused the command (e.g. too many parameters).
                error.kind = .server
                if case .extended(let query) = current?.command { statements.remove(query.sql) }
                finishCurrent(.failure(error))
            }
            return
        }
    }

    /// `PQflush` until libpq's buffer is empty; asks for writability while it is not.
    private func flush() -> Bool {
        guard let conn else { return false }
        switch PQflush(conn) {
        case 0:
            if wantsWrite {
                wantsWrite = false
                loop.modify(fd: registeredFD, events: .readable)
            }
            return true
        case 1:
            if !wantsWrite {
                wantsWrite = true
                loop.modify(fd: registeredFD, events: [.readable, .writable])
            }
            return true
        default:
            return false
        }
    }

    // MARK: Readiness

    func ioReady(readable: Bool, writable: Bool, hangup: Bool) {
        switch state {
        case .connecting:
            continueConnecting()
            return
        case .idle, .closed:
            return
        case .ready:
            break
        }
        guard let conn else { return }
        if writable && wantsWrite && !flush() {
            connectionLost()
            return
        }
        guard readable || hangup else { return }
        if progress.awaitsFirstResponseByte {
            var byte: UInt8 = 0
            let peeked = recv(PQsocket(conn), &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) == 1
            progress.firstResponseByteArrived(peeked ? byte : nil)
        }
        guard PQconsumeInput(conn) == 1 else {
            connectionLost()
            return
        }
        processInput()
        guard hangup else { return }
        // The server closed its end: take what it sent last (often a FATAL error), then give up.
        var rounds = 0
        while state == .ready, let conn = self.conn, rounds < 64, PQconsumeInput(conn) == 1 {
            rounds += 1
            processInput()
        }
        if state == .ready { connectionLost() }
    }

    private func processInput() {
        while state == .ready, current != nil, let conn, PQisBusy(conn) == 0 {
            if let result = PQgetResult(conn) {
                absorb(result)
            } else {
                stepFinished()
            }
        }
        guard state == .ready, let conn else { return }
        while let notify = PQnotifies(conn) {
            if let onNotification {
                let channel = String(cString: notify.pointee.relname)
                let payload = notify.pointee.extra.map { String(cString: $0) } ?? ""
                onNotification(channel, payload)
            }
            PQfreemem(notify)
        }
        if PQstatus(conn) == CONNECTION_BAD || (serverEndedSession && current == nil) { connectionLost() }
    }

    private func absorb(_ result: OpaquePointer) {
        switch PQresultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            if currentError == nil {
                if let previous = currentResult { PQclear(previous) }
                currentResult = result
            } else {
                PQclear(result)
            }
        case PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_COPY_BOTH:
            PQclear(result)
            // Leaving COPY mode needs the copy API; this client does not offer it, so the connection goes.
            let error = PostgresError(kind: .server, message: "COPY is not supported by this client")
            close(
                error: PostgresError(kind: .unavailable, message: "connection closed after a COPY statement"),
                currentFailure: error)
        default:
            if currentError == nil { currentError = LibPQ.serverError(from: result) }
            PQclear(result)
        }
    }

    private func takeResult() -> OpaquePointer? {
        defer { currentResult = nil }
        return currentResult
    }

    private func discardResult() {
        if let currentResult { PQclear(currentResult) }
        currentResult = nil
    }

    /// `PQgetResult` returned NULL: the current protocol step is over.
    private func stepFinished() {
        guard let operation = current else { return }
        switch progress.step {
        case .deallocating(let name):
            // A failed DEALLOCATE (aborted transaction) only leaks a server-side statement; go on.
            discardResult()
            currentError = nil
            guard case .extended(let query) = operation.command else { return }
            progress.stepAdvanced(to: .preparing(name))
            sendPrepare(name: name, query)
        case .preparing(let name):
            discardResult()
            guard case .extended(let query) = operation.command else { return }
            if let error = currentError {
                statements.remove(query.sql)
                finishCurrent(.failure(error))
            } else {
                progress.stepAdvanced(to: .executing)
                sendPrepared(name: name, query)
            }
        case .executing, .simple:
            if let error = currentError {
                discardResult()
                if case .extended(let query) = operation.command {
                    switch error.sqlState {
                    case "26000": statements.removeAll() // our statements are gone (DISCARD ALL / DEALLOCATE ALL)
                    case "0A000": statements.remove(query.sql) // "cached plan must not change result type"
                    default: break
                    }
                }
                finishCurrent(.failure(error))
            } else {
                finishCurrent(.success(PostgresRows(storage: takeResult().map(ResultStorage.init(taking:)))))
            }
        }
    }

    private func finishCurrent(_ result: QueryResult) {
        guard let operation = current else { return }
        current = nil
        currentError = nil
        discardResult()
        Self.deliver(operation.completion, result, from: self)
        if state == .ready, current == nil, let next = queue.popFirst() { start(next) }
    }

    private static func deliver(
        _ completion: ConnectionOperation.Completion, _ result: QueryResult,
        from driver: ConnectionDriver
    ) {
        switch completion {
        case .resume(let continuation): continuation.resume(returning: result)
        case .pooled(let query):
            if let delegate = driver.delegate {
                delegate.connection(driver, finished: query, with: result)
            } else {
                query.continuation.resume(returning: result)
            }
        case .callback(let callback): callback(result)
        }
    }

    // MARK: Closing

    private func connectionLost() {
        let error = PostgresError(
            kind: .unavailable,
            message: "connection to the server was lost: \(LibPQ.errorMessage(conn))")
        var currentFailure = error
        if var serverError = currentError {
            // Typically 57P01 "terminating connection due to administrator command".
            serverError.kind = .unavailable
            currentFailure = serverError
        }
        currentFailure.safeToRetry = progress.isSafeToRetry(
            after: .connectionLost(serverErrorSQLState: currentError?.sqlState))
        close(error: error, currentFailure: currentFailure)
    }

    /// Before an idle connection is reused: looks at what arrived while it sat in the pool. A terminated
    /// backend or a server that shut down leaves an error message and EOF there; the connection is then
    /// closed here, before a statement is sent into it. Usually one non-blocking `recv(MSG_PEEK)`.
    func isAliveForReuse() -> Bool {
        guard state == .ready, current == nil, let conn else { return false }
        let fd = PQsocket(conn)
        var byte: UInt8 = 0
        for _ in 0..<8 {
            let n = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
            if n < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                    progress.connectionCheckedForReuse()
                    return true
                }
                connectionLost()
                return false
            }
            if n == 0 {
                connectionLost() // EOF with nothing left to read
                return false
            }
            // Bytes on an idle connection (a notice, a parameter change, a FATAL error): let libpq take them.
            guard PQconsumeInput(conn) == 1 else {
                connectionLost()
                return false
            }
            processInput()
            guard state == .ready else { return false }
        }
        progress.connectionCheckedForReuse()
        return true
    }

    /// Closes the connection (unregister, then `PQfinish`) and fails whatever was pending.
    func close(error: PostgresError = .closed("the connection was closed"), currentFailure: PostgresError? = nil) {
        guard state != .closed else { return }
        let wasConnecting = state == .connecting || state == .idle
        state = .closed
        if let connectTimer {
            loop.cancelTimer(connectTimer)
            self.connectTimer = nil
        }
        if registeredFD >= 0 {
            loop.unregister(fd: registeredFD)
            registeredFD = -1
        }
        discardResult()
        if let conn { PQfinish(conn) }
        conn = nil
        let failedCurrent = current
        current = nil
        let queued = queue.removeAll()
        if wasConnecting {
            delegate?.connection(self, failedToConnect: error)
        } else {
            delegate?.connection(self, closedWith: error)
        }
        if let failedCurrent { Self.deliver(failedCurrent.completion, .failure(currentFailure ?? error), from: self) }
        var notSent = error
        notSent.safeToRetry = progress.isSafeToRetry(after: .notSent)
        for operation in queued { Self.deliver(operation.completion, .failure(notSent), from: self) }
    }
}

@available(*, unavailable)
extension ConnectionDriver: Sendable {}

/// Carries a loop-confined object through a `@Sendable` closure that runs on that same loop.
struct UncheckedTransfer<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Calls `body` with a NULL-terminated array of C strings.
private func withCStringArray<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    var pointers: [UnsafePointer<CChar>?] = copies.map { UnsafePointer($0) }
    pointers.append(nil)
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
