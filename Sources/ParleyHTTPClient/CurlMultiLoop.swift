import CCurl
import Glibc
import ParleyObservability
import Synchronization

/// The client thread: one `curl_multi` handle driving every transfer of a client. Requests arrive from any
/// thread through `inbox` plus `curl_multi_wakeup` (the only curl call made off this thread, and documented as
/// safe for that); the easy handles and `transfers` are touched on the client thread only.
final class CurlMultiLoop: @unchecked Sendable {
    private struct Inbox {
        var submitted: [SubmittedRequest] = []
        var cancelled: [UInt64] = []
        var shutdownRequested = false
    }

    private let multi: UnsafeMutableRawPointer
    private let inbox = Mutex(Inbox())
    private let maxResponseBytes: Int
    private let tls: HTTPClientTLS
    private let logger: Logger?

    // Client-thread state.
    private var transfers: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var transfersByID: [UInt64: CurlTransfer] = [:]

    init(maxResponseBytes: Int, maxConnectionsPerHost: Int, tls: HTTPClientTLS, logger: Logger?) {
        CurlGlobal.initialize()
        guard let multi = curl_multi_init() else { fatalError("curl_multi_init failed; out of memory") }
        self.multi = multi
        self.maxResponseBytes = maxResponseBytes
        self.tls = tls
        self.logger = logger
        // HTTP/2 requests to one host share a connection as streams; HTTP/1.1 connections are reused (the
        // multi handle keeps the connection cache), never pipelined.
        _ = parley_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX)
        if maxConnectionsPerHost > 0 {
            _ = parley_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maxConnectionsPerHost)
        }
    }

    deinit {
        // Freed only when no thread can call `curl_multi_wakeup` on it any more.
        curl_multi_cleanup(multi)
    }

    // MARK: Any thread

    /// Queues a request; resumes its continuation at once if the client is shut down or the task cancelled.
    func submit(_ request: SubmittedRequest) {
        let refusal: HTTPClientError? = inbox.withLock { inbox in
            if inbox.shutdownRequested { return .shutdown }
            // Checked under the lock: a cancellation after this point finds the request queued or running.
            if Task.isCancelled { return .cancelled }
            inbox.submitted.append(request)
            return nil
        }
        if let refusal {
            request.continuation.resume(returning: .failure(refusal))
        } else {
            curl_multi_wakeup(multi)
        }
    }

    /// Fails request `id` with `.cancelled` if it is still queued or running.
    func cancel(id: UInt64) {
        let queued: SubmittedRequest? = inbox.withLock { inbox in
            if let index = inbox.submitted.firstIndex(where: { $0.id == id }) {
                return inbox.submitted.remove(at: index)
            }
            inbox.cancelled.append(id)
            return nil
        }
        if let queued {
            queued.continuation.resume(returning: .failure(.cancelled))
        } else {
            curl_multi_wakeup(multi)
        }
    }

    /// Makes `run()` fail every request with `.shutdown` and return; later submissions are refused.
    func requestShutdown() {
        inbox.withLock { $0.shutdownRequested = true }
        curl_multi_wakeup(multi)
    }

    // MARK: Client thread

    func run() {
        while true {
            let (submitted, cancelled, stop) = inbox.withLock { inbox in
                defer {
                    inbox.submitted.removeAll()
                    inbox.cancelled.removeAll()
                }
                return (inbox.submitted, inbox.cancelled, inbox.shutdownRequested)
            }
            if stop {
                for request in submitted { request.continuation.resume(returning: .failure(.shutdown)) }
                for transfer in Array(transfers.values) { remove(transfer, result: .failure(.shutdown)) }
                return
            }
            for request in submitted { start(request) }
            for id in cancelled {
                // Unknown ids: the request already finished, or was cancelled before it was queued (then
                // `submit` refused it, having seen Task.isCancelled under the same lock).
                if let transfer = transfersByID[id] { remove(transfer, result: .failure(.cancelled)) }
            }

            var running: Int32 = 0
            let performed = curl_multi_perform(multi, &running)
            if performed != CURLM_OK {
                let message = String(cString: curl_multi_strerror(performed))
                logger?.error("curl_multi_perform failed", ["error": .string(message)])
            }
            collectFinished()
            // Sleeps until a socket is ready, a wake-up, or curl's next timeout, whichever comes first.
            var ready: Int32 = 0
            _ = curl_multi_poll(multi, nil, 0, 1000, &ready)
        }
    }

    private func start(_ request: SubmittedRequest) {
        let transfer: CurlTransfer
        do {
            transfer = try CurlTransfer(request, maxResponseBytes: maxResponseBytes, tls: tls)
        } catch {
            request.continuation.resume(returning: .failure(error))
            return
        }
        let added = curl_multi_add_handle(multi, transfer.easy)
        guard added == CURLM_OK else {
            transfer.complete(
                .failure(
                    .transport(
                        code: Int(added.rawValue),
                        message: String(cString: curl_multi_strerror(added)))))
            return
        }
        transfers[transfer.easy] = transfer
        transfersByID[transfer.id] = transfer
    }

    private func collectFinished() {
        var queued: Int32 = 0
        while let message = curl_multi_info_read(multi, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                let transfer = transfers[easy]
            else { continue }
            let code = message.pointee.data.result
            curl_multi_remove_handle(multi, easy)
            transfers[easy] = nil
            transfersByID[transfer.id] = nil
            transfer.finish(code: code)
            if code != CURLE_OK, let logger, logger.isEnabled(.debug) {
                logger.debug("http client request failed", ["code": .int(Int(code.rawValue))])
            }
        }
    }

    private func remove(_ transfer: CurlTransfer, result: Result<HTTPClientResponse, HTTPClientError>) {
        curl_multi_remove_handle(multi, transfer.easy)
        transfers[transfer.easy] = nil
        transfersByID[transfer.id] = nil
        transfer.complete(result)
    }
}

/// `curl_global_init` must run once per process before any other curl call (and is not thread-safe).
enum CurlGlobal {
    // Swift runs a global's initializer once, thread-safely.
    private static let initialized: Bool = {
        let code = parley_curl_global_init()
        precondition(code == CURLE_OK, "curl_global_init failed: \(code.rawValue)")
        return true
    }()

    static func initialize() { _ = initialized }

    /// Whether concurrent HTTP/2 prior-knowledge requests can share a connection (libcurl 8.0 and later).
    static let multiplexesPriorKnowledge = parley_curl_version_num() >= 0x08_00_00
}
