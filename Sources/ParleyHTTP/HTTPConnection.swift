import CParleyLinux
import Glibc
import ParleyNet
import ParleyObservability

/// Drives one HTTP/1.1 connection on its event loop: reads bytes into the pure parser, dispatches
/// each complete request as a task on the same loop, writes answers in order, and enforces the
/// timeouts and buffer bounds. Loop-confined: every method runs on `loop`'s thread.
final class HTTPConnection: IOHandler {
    let fd: Int32
    let loop: EventLoop
    let remoteAddress: String
    // The loop server outlives its connections (it closes them all before it goes), so no refcounting here.
    private unowned(unsafe) let host: LoopServer
    private var parser: HTTPRequestParser

    // The request being read.
    private var head: HTTPRequestHead?
    /// Whether a head is held, without `head == nil`: that copies the whole optional head (strings, header
    /// array) to compare it, and the input loop asks on every turn.
    private var hasHead: Bool {
        if case .none = head { return false }
        return true
    }
    private var match: RouteMatch = .notFound
    private var body: [UInt8] = []
    private var bodyStream: RequestBodyStream?
    private var requestComplete = false
    private var inFlight = false
    private var requestStartedAt: Instant?

    // Output.
    private var output: [UInt8] = []
    private var outputOffset = 0
    /// A file body still being sent after `output` (sendfile); `fileOffset` is the next byte to send.
    private var outputFile: ResponseFile?
    private var fileOffset: Int64 = 0
    private var fileEnd: Int64 = 0
    private var closeAfterWrite = false
    private var lastWriteProgress = Instant.now()

    // Interest and lifecycle.
    private var readingPausedByHandler = false
    private var registered: IOEvents = .readable
    private(set) var lastActivity = Instant.now()
    private(set) var isClosed = false
    private var upgraded: (handler: any ByteStreamHandler, channel: ByteChannel)?
    private var upgradeBackpressured = false

    init(fd: Int32, remoteAddress: String, host: LoopServer) {
        self.fd = fd
        self.loop = host.loop
        self.remoteAddress = remoteAddress
        self.host = host
        self.parser = HTTPRequestParser(limits: HTTPParserLimits(maxHeaderBytes: host.configuration.maxHeaderBytes,
                                                                 maxBodyBytes: host.configuration.defaultBodyLimit))
    }

    var pendingOutputBytes: Int { output.count - outputOffset + Int(fileEnd - fileOffset) }

    /// No request in progress and nothing to write: safe to close at shutdown or on idle timeout.
    var isIdle: Bool {
        upgraded == nil && !inFlight && !hasHead && pendingOutputBytes == 0 && parser.bufferedByteCount == 0
    }

    // MARK: Readiness

    func ioReady(readable: Bool, writable: Bool, hangup: Bool) {
        if writable {
            flush()
            // Drained: continue with pipelined requests that waited for the answer to go out.
            if !isClosed, upgraded == nil, !inFlight, pendingOutputBytes == 0, parser.bufferedByteCount > 0 { processInput() }
        }
        if isClosed { return }
        if readable {
            readAvailable()
        } else if hangup {
            close()
        }
    }

    private func readAvailable() {
        let scratch = host.readScratch
        // Bounded per wake-up so one busy client cannot starve the loop's other sockets.
        for _ in 0..<4 {
            let n = read(fd, scratch.baseAddress, scratch.count)
            if n > 0 {
                lastActivity = loop.wakeTime
                let bytes = UnsafeRawBufferPointer(rebasing: scratch[0..<n])
                if let upgraded {
                    upgraded.handler.channelRead(bytes)
                    if isClosed || shouldPauseReading { return }
                    continue
                }
                if requestStartedAt == nil && !hasHead { requestStartedAt = lastActivity }
                parser.append(bytes)
                processInput()
                if isClosed || shouldPauseReading { break }
                if n < scratch.count { break }
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
        // A client that half-closes after sending still gets the answer to a request in flight.
        if inFlight && upgraded == nil {
            closeAfterWrite = true
            setInterest([])
            return
        }
        close()
    }

    // MARK: Requests

    private func processInput() {
        while !isClosed, upgraded == nil {
            if inFlight && (bodyStream == nil || requestComplete) { break }
            // Do not start the next pipelined request until the previous answer is out (backpressure).
            if !hasHead && pendingOutputBytes > 0 { break }
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
                if let bodyStream {
                    if !bodyStream.push(chunk) { setReadingPausedForBody(true) }
                } else {
                    body.append(contentsOf: chunk)
                }
            case .end:
                requestComplete = true
                if let bodyStream {
                    bodyStream.finish()
                } else if let head = head.take() {
                    // Moved into the request, not copied; `inFlight` now says a request is being answered.
                    dispatch(head: head, body: .buffered(body))
                }
            }
        }
        updateInterest()
    }

    private func headReceived(_ newHead: consuming HTTPRequestHead) {
        body = []
        requestComplete = false
        requestStartedAt = nil
        match = host.responder.router.match(method: newHead.method, path: newHead.path)
        var limit = host.configuration.defaultBodyLimit
        var streamed = false
        if case .found(let route, _) = match {
            limit = route.options.bodyLimit ?? limit
            streamed = route.options.streamBody
        }
        parser.setBodyLimit(limit)
        if newHead.expectContinue, newHead.version == .http1_1 {
            // RFC 9110 §10.1.1: say 100 only when we will read the body; an oversize one gets 413 next.
            if case .contentLength(let length) = newHead.framing, length > limit {
                // parser throws 413 on the next call
            } else {
                enqueue(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
                flush()
            }
        }
        if streamed {
            let box = LoopBound(self)
            let loop = self.loop
            let stream = RequestBodyStream { loop.execute { box.value.setReadingPausedForBody(false) } }
            bodyStream = stream
            // The head stays while the body streams in (the request is being read and answered at once).
            head = newHead
            dispatch(head: newHead, body: .stream(stream))
        } else {
            head = newHead
        }
    }

    private func dispatch(head: consuming HTTPRequestHead, body: RequestBody) {
        inFlight = true
        let request = HTTPRequest(head: head, body: body, remoteAddress: remoteAddress)
        // The request started when its last bytes were read (this wake-up): no clock read of its own.
        var context = RequestContext(requestID: "", logger: host.logger, remoteAddress: remoteAddress,
                                     startedAt: lastActivity)
        if case .found(let route, let parameters) = match {
            context.parameters = parameters
            context.routePattern = route.metricName
            context.routeID = route.id
        } else if case .methodNotAllowed(_, let pattern) = match {
            context.routePattern = pattern
        }
        if case .found(let route, _) = match, let immediate = route.immediate, case .buffered = body,
           let response = (try? immediate(request, &context)) ?? nil {
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
        guard !isClosed else { return }
        inFlight = false
        let bodyUnread = bodyStream != nil && !requestComplete
        if let bodyStream, bodyUnread { bodyStream.fail(.badRequest.with(message: "response sent before the body was read")) }
        self.head = nil
        self.body = []
        self.bodyStream = nil
        if readingPausedByHandler { readingPausedByHandler = false }
        let upgrading = response.status == 101 && response.upgrade != nil
        let method = request.head.method
        let keepAlive = upgrading || (request.head.keepAlive && !response.closeConnection && !host.isShuttingDown && !bodyUnread)
        let date = host.dateHeader()
        let serializer = host.serializer
        var serialized: UnsafeRawBufferPointer?
        if pendingOutputBytes == 0,
           serializer.serializedSizeBound(response, requestMethod: method, date: date) <= host.writeScratch.count {
            let base = host.writeScratch.baseAddress!
            let count = serializer.serialize(response, requestMethod: method, requestVersion: request.head.version,
                                             keepAlive: keepAlive, date: date, into: base)
            serialized = UnsafeRawBufferPointer(start: base, count: count)
        } else {
            enqueue(serializer.serialize(response, requestMethod: method, requestVersion: request.head.version,
                                         keepAlive: keepAlive, date: date))
        }
        if !keepAlive { closeAfterWrite = true }
        if let file = response.file, method != .HEAD, response.status >= 200, response.status != 204,
           response.status != 304, file.length > 0 {
            outputFile = file
            fileOffset = file.offset
            fileEnd = file.offset + file.length
        }
        if let serialized { sendNow(serialized) }
        if upgrading, let upgrade = response.upgrade {
            let leftover = parser.takeUnconsumedBytes()
            let channel = ByteChannel(connection: self)
            let handler = upgrade.makeHandler(loop)
            upgraded = (handler, channel)
            flush()
            if !isClosed { handler.channelActive(channel, initialBytes: leftover) }
            updateInterest()
            return
        }
        flush()
        if continueInput && !isClosed && !closeAfterWrite && pendingOutputBytes == 0 { processInput() }
    }

    private func parseFailed(_ error: HTTPParseError) {
        let apiError = APIError.forParseStatus(error.status, reason: error.reason)
        if let bodyStream {
            // The handler owns the answer for a streamed request; it sees the failure through the stream.
            bodyStream.fail(apiError)
            closeAfterWrite = true
            requestComplete = true
            setInterest([])
            return
        }
        host.logger.debug("http parse error", ["status": .int(error.status), "reason": .string(error.reason),
                                               "remote": .string(remoteAddress)])
        host.recordProtocolError(status: error.status)
        // Every parse failure ends the connection: the framing of what follows cannot be trusted.
        writeErrorAndClose(apiError)
    }

    private func writeErrorAndClose(_ error: APIError) {
        head = nil
        closeAfterWrite = true
        enqueue(host.serializer.serialize(.error(error), requestMethod: .GET, requestVersion: .http1_1, keepAlive: false,
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
            let n = send(fd, bytes.baseAddress! + offset, bytes.count - offset,
                         Int32(MSG_NOSIGNAL) | (outputFile != nil ? Int32(MSG_MORE) : 0))
            if n > 0 {
                offset += n
                lastWriteProgress = loop.wakeTime
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        if offset < bytes.count { enqueue(Array(bytes[offset...])) }
    }

    private func flush() {
        while outputOffset < output.count {
            let n = output.withUnsafeBytes { raw in
                // A file follows: MSG_MORE lets the kernel put the head in the same segments as the file's bytes.
                send(fd, raw.baseAddress! + outputOffset, raw.count - outputOffset,
                     Int32(MSG_NOSIGNAL) | (outputFile != nil ? Int32(MSG_MORE) : 0))
            }
            if n > 0 {
                outputOffset += n
                lastWriteProgress = loop.wakeTime
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                updateInterest()
                return
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                close()
                return
            }
        }
        if outputFile != nil && !flushFile() { return }
        // Drained: drop a large buffer rather than keep its capacity for an idle connection.
        output = []
        outputOffset = 0
        if closeAfterWrite {
            close()
            return
        }
        if let upgraded, upgradeBackpressured {
            upgradeBackpressured = false
            upgraded.handler.channelWritable()
        }
        updateInterest()
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
                lastWriteProgress = loop.wakeTime
                budget -= n
                if budget <= 0 && fileOffset < fileEnd {
                    updateInterest()
                    return false
                }
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                updateInterest()
                return false
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                // 0 before the end: the file shrank under us; the promised length cannot be met.
                close()
                return false
            }
        }
        outputFile = nil
        fileOffset = 0
        fileEnd = 0
        return true
    }

    // MARK: Interest

    private var shouldPauseReading: Bool {
        if readingPausedByHandler { return true }
        if closeAfterWrite { return true }
        if upgraded != nil { return pendingOutputBytes > host.configuration.maxPendingOutputBytes }
        // Pipelined bytes pile up while a request runs: stop reading past a bound (backpressure).
        if inFlight && bodyStream == nil && parser.bufferedByteCount > host.configuration.maxHeaderBytes * 4 { return true }
        return pendingOutputBytes > host.configuration.maxPendingOutputBytes
    }

    private func updateInterest() {
        guard !isClosed else { return }
        var wanted: IOEvents = []
        if !shouldPauseReading { wanted.insert(.readable) }
        if pendingOutputBytes > 0 { wanted.insert(.writable) }
        setInterest(wanted)
    }

    private func setInterest(_ wanted: IOEvents) {
        guard !isClosed, wanted != registered else { return }
        registered = wanted
        loop.modify(fd: fd, events: wanted)
    }

    fileprivate func setReadingPausedForBody(_ paused: Bool) {
        guard !isClosed else { return }
        readingPausedByHandler = paused
        updateInterest()
        if !paused && parser.bufferedByteCount > 0 { processInput() }
    }

    func setReadingPaused(_ paused: Bool) {
        readingPausedByHandler = paused
        updateInterest()
    }

    // MARK: Upgraded byte stream

    func channelWrite(_ bytes: [UInt8]) -> Bool {
        guard !isClosed else { return false }
        enqueue(bytes)
        flush()
        let ok = pendingOutputBytes <= host.configuration.maxPendingOutputBytes
        if !ok { upgradeBackpressured = true }
        return ok
    }

    func channelClose(flush shouldFlush: Bool) {
        guard !isClosed else { return }
        if shouldFlush && pendingOutputBytes > 0 {
            closeAfterWrite = true
            updateInterest()
        } else {
            close()
        }
    }

    // MARK: Timeouts and shutdown

    /// Called by the loop's sweep: answers 408 or closes when a deadline has passed.
    func checkTimeouts(now: Instant) {
        let config = host.configuration
        if pendingOutputBytes > 0 {
            if now.since(lastWriteProgress) > config.writeTimeout { close() }
            return
        }
        if upgraded != nil || inFlight { return }
        if let started = requestStartedAt, !hasHead {
            // Slowloris: the whole head must arrive within the header timeout.
            if now.since(started) > config.headerTimeout {
                host.recordProtocolError(status: 408)
                writeErrorAndClose(.requestTimeout)
            }
            return
        }
        if hasHead {
            if now.since(lastActivity) > config.idleTimeout { writeErrorAndClose(.requestTimeout) }
            return
        }
        if now.since(lastActivity) > config.idleTimeout { close() }
    }

    func beginShutdown() {
        if let upgraded {
            upgraded.handler.serverShuttingDown()
            return
        }
        if isIdle { close() } else if !inFlight && !hasHead { closeAfterWrite = true; if pendingOutputBytes == 0 { close() } }
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        loop.unregister(fd: fd)
        Glibc.close(fd)
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
