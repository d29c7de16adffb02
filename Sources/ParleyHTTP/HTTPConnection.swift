import CParleyLinux
import Glibc
import ParleyNet
import ParleyObservability

/// Drives one HTTP/1.1 connection on its event loop: the thin driver around ``HTTPConnectionStateMachine``. It reads
/// bytes into the pure parser, dispatches each complete request (an immediate handler at once, else a task on the
/// same loop), writes answers (from the loop's scratch buffer when they fit, a file body with sendfile), and tells the
/// machine what happened; the machine decides what comes next (the next pipelined request, pausing reading, closing,
/// an upgrade, a timeout). Loop-confined: every method runs on `loop`'s thread.
final class HTTPConnection: IOHandler {
    let fd: Int32
    let loop: EventLoop
    let remoteAddress: String
    // The loop server outlives its connections (it closes them all before it goes), so no refcounting here.
    private unowned(unsafe) let host: LoopServer
    private var parser: HTTPRequestParser
    private var machine: HTTPConnectionStateMachine

    // The request being read: its head until a buffered body ends, the body, or the stream a handler reads.
    private var head: HTTPRequestHead?
    private var match: RouteMatch = .notFound
    private var body: [UInt8] = []
    /// Bytes of `body` taken from the server's budget for buffered bodies; given back with the answer or the close.
    private var bodyBudgetHeld = 0
    private var bodyStream: RequestBodyStream?

    // Output.
    private var output: [UInt8] = []
    private var outputOffset = 0
    /// A file body still being sent after `output` (sendfile); `fileOffset` is the next byte to send.
    private var outputFile: ResponseFile?
    private var fileOffset: Int64 = 0
    private var fileEnd: Int64 = 0

    /// The readiness registered with the loop (the machine says what is wanted; this avoids needless epoll calls).
    private var registered: IOEvents = .readable
    private var upgraded: (handler: any ByteStreamHandler, channel: ByteChannel)?

    init(fd: Int32, remoteAddress: String, host: LoopServer) {
        self.fd = fd
        self.loop = host.loop
        self.remoteAddress = remoteAddress
        self.host = host
        self.parser = HTTPRequestParser(
            limits: HTTPParserLimits(
                maxHeaderBytes: host.configuration.maxHeaderBytes,
                maxBodyBytes: host.configuration.defaultBodyLimit))
        self.machine = HTTPConnectionStateMachine(configuration: host.machineConfiguration, now: host.loop.wakeTime)
    }

    var pendingOutputBytes: Int { output.count - outputOffset + Int(fileEnd - fileOffset) }

    var isClosed: Bool { machine.isClosed }

    // MARK: Readiness

    func ioReady(readable: Bool, writable: Bool, hangup: Bool) {
        // Drained: a pipelined request that waited for the answer to go out goes on.
        if writable && flush() { processInput() }
        if isClosed { return }
        if readable || (hangup && machine.isServingRequests) {
            // While reading is paused (backpressure) the peer's half-close and a reset both come as hangup only: a
            // read tells them apart (EOF, or an error), so a half-close reaches the machine like any other.
            readAvailable()
        } else if hangup {
            close()
        }
    }

    private func readAvailable() {
        let scratch = host.readScratch
        // Bounded per wake-up so one busy client cannot starve the loop's other sockets.
        reading: for _ in 0..<4 {
            let n = read(fd, scratch.baseAddress, scratch.count)
            if n > 0 {
                let bytes = UnsafeRawBufferPointer(rebasing: scratch[0..<n])
                switch machine.bytesReceived(now: loop.wakeTime) {
                case .parse:
                    parser.append(bytes)
                    processInput()
                    if !readingWanted || n < scratch.count { break reading }
                case .deliverToUpgradeHandler:
                    upgraded?.handler.channelRead(bytes)
                    if !readingWanted { break reading }
                case .discard:
                    break reading
                }
            } else if n == 0 {
                peerClosed()
                return
            } else {
                if errno == EAGAIN || errno == EWOULDBLOCK { break }
                if errno == EINTR { continue }
                close()
                return
            }
        }
        updateInterest()
    }

    private func peerClosed() {
        switch machine.peerHalfClosed(pendingOutputBytes: pendingOutputBytes) {
        case .none:
            updateInterest()
        case .close:
            close()
        case .closeAfterAnswer(let failBodyStream):
            // A client that half-closes after sending still gets the answer to its request.
            if failBodyStream {
                bodyStream?.fail(.badRequest.with(message: "connection closed before the end of the body"))
            }
            updateInterest()
        }
    }

    // MARK: Requests

    private func processInput() {
        while machine.acceptsInput(pendingOutputBytes: pendingOutputBytes) {
            let next: HTTPParserEvent?
            do {
                next = try parser.next()
            } catch {
                parseFailed(error)
                return
            }
            guard let event = consume next else { break }
            // Consumed, so the head moves into `headReceived` rather than being copied and destroyed twice.
            switch consume event {
            case .head(let newHead):
                headReceived(newHead)
            case .body(let chunk):
                switch machine.bodyReceived(byteCount: chunk.count) {
                case .buffer:
                    guard host.bodyBudget.reserve(chunk.count) else {
                        bodyBudgetExhausted()
                        return
                    }
                    bodyBudgetHeld += chunk.count
                    body.append(contentsOf: chunk)
                case .stream:
                    if let bodyStream, !bodyStream.push(chunk) { machine.bodyConsumerFellBehind() }
                case .discard:
                    break
                }
            case .end:
                switch machine.requestEnded() {
                case .dispatch:
                    // Moved into the request, not copied.
                    if let head = head.take() { dispatch(head: head, body: .buffered(body)) }
                case .finishBodyStream:
                    bodyStream?.finish()
                case .none:
                    break
                }
            }
        }
        updateInterest()
    }

    private func headReceived(_ newHead: consuming HTTPRequestHead) {
        body = []
        match = host.responder.router.match(method: newHead.method, path: newHead.path)
        var limit = host.configuration.defaultBodyLimit
        var streamed = false
        var routed = false
        if case .found(let route, _) = match {
            limit = route.options.bodyLimit ?? limit
            streamed = route.options.streamBody
            routed = true
        }
        parser.setBodyLimit(limit)
        switch machine.headReceived(
            newHead, routed: routed, bodyLimit: limit, streamed: streamed, now: loop.wakeTime)
        {
        case .readBody(let sendContinue):
            if sendContinue { writeContinue() }
            head = newHead
        case .dispatchWithBodyStream(let sendContinue):
            if sendContinue { writeContinue() }
            let box = LoopBound(self)
            let loop = self.loop
            let stream = RequestBodyStream { loop.execute { box.value.bodyConsumerCaughtUp() } }
            bodyStream = stream
            dispatch(head: newHead, body: .stream(stream))
        case .answerWithoutReadingBody:
            dispatch(head: newHead, body: .buffered([]))
        }
    }

    private func bodyBudgetExhausted() {
        switch machine.bodyBudgetExhausted() {
        case .none:
            break
        case .answerServiceUnavailableThenClose:
            releaseBodyBudget()
            body = []
            host.recordProtocolError(status: 503)
            writeErrorAndClose(.tooManyBodies)
        }
        updateInterest()
    }

    private func releaseBodyBudget() {
        host.bodyBudget.release(bodyBudgetHeld)
        bodyBudgetHeld = 0
    }

    private func writeContinue() {
        enqueue(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
        flush()
    }

    private func dispatch(head: consuming HTTPRequestHead, body: RequestBody) {
        let request = HTTPRequest(head: head, body: body, remoteAddress: remoteAddress)
        // The request started when its last bytes were read (this wake-up): no clock read of its own.
        var context = RequestContext(
            requestID: "", logger: host.logger, remoteAddress: remoteAddress,
            startedAt: machine.lastActivity)
        if case .found(let route, let parameters) = match {
            context.parameters = parameters
            context.routePattern = route.metricName
            context.routeID = route.id
        } else if case .methodNotAllowed(_, let pattern) = match {
            context.routePattern = pattern
        }
        if case .found(let route, _) = match, let immediate = route.immediate, case .buffered = body,
            let response = (try? immediate(request, &context)) ?? nil
        {
            // Answered without a task: the caller's input loop goes on with the next pipelined request.
            responseReady(response, to: request, continueInput: false)
            return
        }
        let handler = host.responder.handler(for: match)
        let box = LoopBound(self)
        let loop = self.loop
        Task(executorPreference: loop) {
            let response: HTTPResponse
            do {
                response = try await handler(request, context)
            } catch {
                response = .error(mapping: error, logger: context.logger)
            }
            if loop.inEventLoop {
                box.value.responseReady(response, to: request)
            } else {
                loop.execute { box.value.responseReady(response, to: request) }
            }
        }
    }

    private func responseReady(_ response: HTTPResponse, to request: HTTPRequest, continueInput: Bool = true) {
        let upgrade = response.status == 101 ? response.upgrade : nil
        let action = machine.responseReady(
            requestKeepAlive: request.head.keepAlive,
            responseCloses: response.closeConnection, upgrade: upgrade != nil,
            bufferedInputBytes: parser.bufferedByteCount, now: loop.wakeTime)
        let keepAlive: Bool
        switch action {
        case .discard:
            return
        case .write, .writeThenUpgrade:
            keepAlive = true
        case .writeThenClose(let failBodyStream):
            keepAlive = false
            if failBodyStream { bodyStream?.fail(.badRequest.with(message: "response sent before the body was read")) }
        }
        self.head = nil
        self.body = []
        releaseBodyBudget()
        self.bodyStream = nil
        let method = request.head.method
        let date = host.dateHeader()
        let serializer = host.serializer
        var serialized: UnsafeRawBufferPointer?
        if pendingOutputBytes == 0,
            serializer.serializedSizeBound(response, requestMethod: method, date: date) <= host.writeScratch.count
        {
            let base = host.writeScratch.baseAddress!
            let count = serializer.serialize(
                response, requestMethod: method, requestVersion: request.head.version,
                keepAlive: keepAlive, date: date, into: base)
            serialized = UnsafeRawBufferPointer(start: base, count: count)
        } else {
            enqueue(
                serializer.serialize(
                    response, requestMethod: method, requestVersion: request.head.version,
                    keepAlive: keepAlive, date: date))
        }
        if let file = response.file, method != .HEAD, response.status >= 200, response.status != 204,
            response.status != 304, file.length > 0
        {
            outputFile = file
            fileOffset = file.offset
            fileEnd = file.offset + file.length
        }
        if let serialized { sendNow(serialized) }
        if case .writeThenUpgrade = action, let upgrade {
            let leftover = parser.takeUnconsumedBytes()
            let channel = ByteChannel(connection: self)
            let handler = upgrade.makeHandler(loop)
            upgraded = (handler, channel)
            flush()
            if !isClosed { handler.channelActive(channel, initialBytes: leftover) }
            updateInterest()
            return
        }
        // Inside the input loop (an immediate answer) the loop itself goes on with the next request.
        if flush() && continueInput { processInput() }
    }

    private func parseFailed(_ error: HTTPParseError) {
        let apiError = APIError.forParseStatus(error.status, reason: error.reason)
        switch machine.parseFailed() {
        case .failBodyStreamThenCloseAfterResponse:
            bodyStream?.fail(apiError)
            updateInterest()
        case .answerErrorThenClose:
            host.logger.debug(
                "http parse error",
                [
                    "status": .int(error.status), "reason": .string(error.reason),
                    "remote": .string(remoteAddress),
                ])
            host.recordProtocolError(status: error.status)
            writeErrorAndClose(apiError)
        }
    }

    /// Writes an error answer with `Connection: close`; the machine is already closing, so the drain closes.
    private func writeErrorAndClose(_ error: APIError) {
        head = nil
        enqueue(
            host.serializer.serialize(
                .error(error), requestMethod: .GET, requestVersion: .http1_1, keepAlive: false,
                date: host.dateHeader()))
        flush()
    }

    // MARK: Output

    private func enqueue(_ bytes: [UInt8]) {
        if outputOffset > 0 && outputOffset == output.count {
            output.removeAll(keepingCapacity: output.capacity <= 64 * 1024)
            outputOffset = 0
        }
        if output.isEmpty { output = bytes } else { output.append(contentsOf: bytes) }
    }

    /// Sends bytes held in the loop's scratch memory (nothing else is queued); what the socket does not take
    /// is copied into `output` for `flush`, which also meets any socket error again and closes.
    private func sendNow(_ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count {
            let n = send(
                fd, bytes.baseAddress! + offset, bytes.count - offset,
                Int32(MSG_NOSIGNAL) | (outputFile != nil ? Int32(MSG_MORE) : 0))
            if n > 0 {
                offset += n
                machine.bytesSent(now: loop.wakeTime)
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        if offset < bytes.count { enqueue(Array(bytes[offset...])) }
    }

    /// Writes what is queued, then a file body. Returns true when everything is out and the machine says a
    /// pipelined request may go on: the caller runs `processInput` unless it is inside it already.
    @discardableResult
    private func flush() -> Bool {
        while outputOffset < output.count {
            let n = output.withUnsafeBytes { raw in
                // A file follows: MSG_MORE lets the kernel put the head in the same segments as the file's bytes.
                send(
                    fd, raw.baseAddress! + outputOffset, raw.count - outputOffset,
                    Int32(MSG_NOSIGNAL) | (outputFile != nil ? Int32(MSG_MORE) : 0))
            }
            if n > 0 {
                outputOffset += n
                machine.bytesSent(now: loop.wakeTime)
            } else if retriesAfterFailedWrite(n) {
                continue
            } else {
                return false
            }
        }
        if outputFile != nil && !flushFile() { return false }
        // Drained: drop a large buffer rather than keep its capacity for an idle connection.
        output = []
        outputOffset = 0
        var processInputNext = false
        switch machine.outputDrained(bufferedInputBytes: parser.bufferedByteCount, now: loop.wakeTime) {
        case .none:
            break
        case .close:
            close()
            return false
        case .lingerThenClose:
            // Nothing more is served: what a request held goes back now, not when the peer gets round to closing.
            releaseBodyBudget()
            body = []
            shutdown(fd, Int32(SHUT_WR))
            updateInterest()
            return false
        case .processBufferedInput:
            processInputNext = true
        case .notifyUpgradeHandlerWritable:
            upgraded?.handler.channelWritable()
        }
        updateInterest()
        return processInputNext
    }

    /// After a `send` or `sendfile` that sent nothing (`n` <= 0): true to try again at once (EINTR). Otherwise the
    /// connection waits for writable interest (EAGAIN) or, for any other error or a 0, closes; the caller stops.
    private func retriesAfterFailedWrite(_ n: Int) -> Bool {
        let error = errno
        if n < 0 && error == EINTR { return true }
        if n < 0 && (error == EAGAIN || error == EWOULDBLOCK) {
            updateInterest()
        } else {
            close()
        }
        return false
    }

    /// Sends the pending file body; false while bytes remain (writable interest is set) or the connection
    /// closed. At most 4 MiB per call, so one fast reader of a large file does not starve the loop's others.
    private func flushFile() -> Bool {
        guard let file = outputFile else { return true }
        var budget = 4 << 20
        while fileOffset < fileEnd {
            var offset = off_t(fileOffset)
            let chunk = Int(min(fileEnd - fileOffset, Int64(1 << 20)))
            let n = sendfile(fd, file.descriptor, &offset, chunk)
            if n > 0 {
                fileOffset += Int64(n)
                machine.bytesSent(now: loop.wakeTime)
                budget -= n
                if budget <= 0 && fileOffset < fileEnd {
                    updateInterest()
                    return false
                }
            } else if retriesAfterFailedWrite(n) { // 0 before the end: the file shrank; the connection closes
                continue
            } else {
                return false
            }
        }
        outputFile = nil
        fileOffset = 0
        fileEnd = 0
        return true
    }

    // MARK: Interest

    private var readingWanted: Bool {
        machine.wantsToRead(pendingOutputBytes: pendingOutputBytes, bufferedInputBytes: parser.bufferedByteCount)
    }

    private func updateInterest() {
        guard !isClosed else { return }
        let wanted = machine.interest(
            pendingOutputBytes: pendingOutputBytes, bufferedInputBytes: parser.bufferedByteCount)
        guard wanted != registered else { return }
        registered = wanted
        loop.modify(fd: fd, events: wanted)
    }

    /// The body stream's consumer caught up (called through `execute`, possibly after the request ended).
    private func bodyConsumerCaughtUp() {
        guard !isClosed else { return }
        let action = machine.bodyConsumerCaughtUp(
            pendingOutputBytes: pendingOutputBytes,
            bufferedInputBytes: parser.bufferedByteCount)
        updateInterest()
        if action == .processBufferedInput { processInput() }
    }

    /// The upgrade handler pauses or resumes reading.
    func setReadingPaused(_ paused: Bool) {
        guard !isClosed else { return }
        machine.upgradeHandlerPausedReading(paused)
        updateInterest()
    }

    // MARK: Upgraded byte stream

    func channelWrite(_ bytes: [UInt8]) -> Bool {
        guard !isClosed else { return false }
        enqueue(bytes)
        flush()
        return machine.upgradeHandlerWrote(pendingOutputBytes: pendingOutputBytes)
    }

    func channelClose(flush shouldFlush: Bool) {
        guard !isClosed else { return }
        switch machine.upgradeHandlerClosed(flush: shouldFlush, pendingOutputBytes: pendingOutputBytes) {
        case .close: close()
        case .closeAfterOutput: updateInterest()
        }
    }

    // MARK: Timeouts and shutdown

    /// Called by the loop's sweep: answers 408 or closes when a deadline has passed.
    func checkTimeouts(now: Instant) {
        switch machine.sweep(now: now, pendingOutputBytes: pendingOutputBytes) {
        case .none:
            break
        case .close:
            close()
        case .answerRequestTimeoutThenClose(let timeout):
            if timeout != .bodyIdle { host.recordProtocolError(status: 408) }
            writeErrorAndClose(Self.error(for: timeout))
        case .failBodyStreamWithRequestTimeout(let timeout):
            if timeout != .bodyIdle { host.recordProtocolError(status: 408) }
            // The handler answers (its error maps to the 408); the connection closes after that answer.
            bodyStream?.fail(Self.error(for: timeout))
            updateInterest()
        }
    }

    private static func error(for timeout: HTTPConnectionStateMachine.RequestTimeout) -> APIError {
        switch timeout {
        case .head: .requestTimeout
        case .bodyIdle: .requestTimeout.with(message: "request timeout: the body stopped arriving")
        case .bodyTooSlow: .requestTimeout.with(message: "request timeout: the body arrives too slowly")
        }
    }

    func beginShutdown() {
        switch machine.shutdownRequested(pendingOutputBytes: pendingOutputBytes) {
        case .none: break
        case .close: close()
        case .closeAfterOutput: updateInterest()
        case .notifyUpgradeHandler: upgraded?.handler.serverShuttingDown()
        }
    }

    func close() {
        guard !isClosed else { return }
        machine.connectionClosed()
        loop.unregister(fd: fd)
        Glibc.close(fd)
        releaseBodyBudget()
        body = []
        bodyStream?.fail(.badRequest.with(message: "connection closed"))
        bodyStream = nil
        output = []
        outputOffset = 0
        outputFile = nil
        fileOffset = 0
        fileEnd = 0
        host.connectionClosed(self)
        if let upgraded {
            self.upgraded = nil
            upgraded.handler.channelClosed()
        }
    }
}

/// Carries a loop-confined object through a `Task` boundary. Safe because it is only dereferenced
/// on its loop (handler tasks run there by executor preference, or hop with `execute`).
struct LoopBound<Value: AnyObject>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
