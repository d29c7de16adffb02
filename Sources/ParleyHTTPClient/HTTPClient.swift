import Glibc
import ParleyObservability
import Synchronization

/// Outgoing HTTP over libcurl, for S3 and (HTTP/2) APNs.
///
/// One background thread per client runs a `curl_multi` loop that drives every request at once: HTTP/2 requests
/// to one host multiplex as streams over one connection, and HTTP/1.1 connections are kept alive and reused.
/// `execute` may be called from any task; it only queues the request and wakes the thread, so no event loop or
/// cooperative thread ever blocks on the network. Create one client per purpose and keep it for the process's
/// lifetime (it owns the connection cache); `shutdown()` it on the way out.
///
/// ```swift
/// let client = HTTPClient()
/// let response = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:9000/bucket/key"))
/// ```
public final class HTTPClient: Sendable {
    /// Responses with a larger body fail with `.responseTooLarge`.
    public let maxResponseBytes: Int
    private let loop: CurlMultiLoop
    private let thread = Mutex<pthread_t?>(nil)
    private let nextID = Atomic<UInt64>(1)

    /// - Parameters:
    ///   - maxResponseBytes: the largest response body accepted (16 MiB by default); bodies are held in memory.
    ///   - maxConnectionsPerHost: 0 for no limit; otherwise further requests to a busy host wait for a connection
    ///     (their timeout runs while they wait).
    ///   - tls: trust and client certificates for `https://` URLs.
    ///   - logger: receives failures of the loop itself, and failed requests at debug level.
    public init(
        maxResponseBytes: Int = 16 * 1024 * 1024, maxConnectionsPerHost: Int = 0, tls: HTTPClientTLS = HTTPClientTLS(),
        logger: Logger? = nil
    ) {
        self.maxResponseBytes = maxResponseBytes
        loop = CurlMultiLoop(
            maxResponseBytes: maxResponseBytes, maxConnectionsPerHost: maxConnectionsPerHost,
            tls: tls, logger: logger)
        let box = Unmanaged.passRetained(loop).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, nil,
            { raw in
                let loop = Unmanaged<CurlMultiLoop>.fromOpaque(raw!).takeRetainedValue()
                loop.run()
                return nil
            }, box)
        precondition(rc == 0, "pthread_create failed: \(rc)")
        self.thread.withLock { $0 = thread }
    }

    deinit {
        shutdown()
    }

    /// Whether concurrent `.http2PriorKnowledge` requests to one host share a connection. False with libcurl
    /// before 8.0 (Debian 12), whose reuse of such connections is broken: each request then gets its own.
    /// HTTP/2 over TLS (`.http2TLS`, as APNs uses) multiplexes either way.
    public static var multiplexesPriorKnowledge: Bool { CurlGlobal.multiplexesPriorKnowledge }

    /// Sends `request` and returns the whole response. HTTP error statuses are responses, not errors.
    /// Cancelling the calling task abandons the request and throws `.cancelled`.
    public func execute(_ request: HTTPClientRequest) async throws(HTTPClientError) -> HTTPClientResponse {
        let id = nextID.add(1, ordering: .relaxed).oldValue
        let loop = self.loop
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                loop.submit(SubmittedRequest(id: id, request: request, continuation: continuation))
            }
        } onCancel: {
            loop.cancel(id: id)
        }
        return try result.get()
    }

    /// Fails every queued and running request with `.shutdown`, closes the connections and joins the client
    /// thread. Later requests fail with `.shutdown`. Safe to call more than once.
    public func shutdown() {
        loop.requestShutdown()
        guard
            let thread = thread.withLock({ thread in
                defer { thread = nil }; return thread
            })
        else { return }
        pthread_join(thread, nil)
    }
}
