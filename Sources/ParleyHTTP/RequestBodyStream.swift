import ParleyNet
import Synchronization

/// A request body delivered in chunks as it arrives, for routes that must not buffer (uploads).
/// Backpressure: when more than `highWater` bytes wait unread, the connection stops reading from the
/// socket until the handler catches up, so memory stays bounded whatever the client sends.
public final class RequestBodyStream: AsyncSequence, Sendable {
    public typealias Element = [UInt8]

    struct State {
        var chunks: [[UInt8]] = []
        var buffered = 0
        var finished = false
        var failure: APIError?
        var waiter: CheckedContinuation<[UInt8]?, any Error>?
        var readingPaused = false
    }

    private let state = Mutex(State())
    private let highWater: Int
    private let resumeReading: @Sendable () -> Void

    init(highWater: Int = 256 * 1024, resumeReading: @escaping @Sendable () -> Void) {
        self.highWater = highWater
        self.resumeReading = resumeReading
    }

    /// Producer side (the connection). Returns false when reading should pause.
    func push(_ chunk: [UInt8]) -> Bool {
        let (waiter, keepReading): (CheckedContinuation<[UInt8]?, any Error>?, Bool) = state.withLock { s in
            if let waiter = s.waiter {
                s.waiter = nil
                return (waiter, true)
            }
            s.chunks.append(chunk)
            s.buffered += chunk.count
            if s.buffered > highWater { s.readingPaused = true }
            return (nil, !s.readingPaused)
        }
        waiter?.resume(returning: chunk)
        return keepReading
    }

    func finish() {
        let waiter = state.withLock { s -> CheckedContinuation<[UInt8]?, any Error>? in
            s.finished = true
            defer { s.waiter = nil }
            return s.chunks.isEmpty ? s.waiter : nil
        }
        waiter?.resume(returning: nil)
    }

    func fail(_ error: APIError) {
        let waiter = state.withLock { s -> CheckedContinuation<[UInt8]?, any Error>? in
            if s.finished && s.chunks.isEmpty { return nil }
            s.failure = error
            s.chunks.removeAll()
            s.buffered = 0
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(throwing: error)
    }

    /// Consumer side: the next chunk, nil at the end; throws the connection's error (413, closed).
    public func next() async throws -> [UInt8]? {
        enum Step { case chunk([UInt8], resume: Bool), end, failed(APIError), wait }
        let step: Step = state.withLock { s in
            if let failure = s.failure { return .failed(failure) }
            if !s.chunks.isEmpty {
                let chunk = s.chunks.removeFirst()
                s.buffered -= chunk.count
                var resume = false
                if s.readingPaused && s.buffered <= highWater / 2 {
                    s.readingPaused = false
                    resume = true
                }
                return .chunk(chunk, resume: resume)
            }
            return s.finished ? .end : .wait
        }
        switch step {
        case .chunk(let chunk, let resume):
            if resume { resumeReading() }
            return chunk
        case .end: return nil
        case .failed(let error): throw error
        case .wait:
            return try await withCheckedThrowingContinuation { continuation in
                let immediate: Result<[UInt8]?, any Error>? = state.withLock { s in
                    if let failure = s.failure { return .failure(failure) }
                    if !s.chunks.isEmpty {
                        let chunk = s.chunks.removeFirst()
                        s.buffered -= chunk.count
                        return .success(chunk)
                    }
                    if s.finished { return .success(nil) }
                    // Nothing buffered: make sure the connection is reading, then wait for the next push.
                    s.waiter = continuation
                    s.readingPaused = false
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
                resumeReading()
            }
        }
    }

    /// Reads the whole body into memory, refusing more than `limit` bytes.
    public func collect(upTo limit: Int) async throws -> [UInt8] {
        var out: [UInt8] = []
        while let chunk = try await next() {
            guard out.count + chunk.count <= limit else { throw APIError.payloadTooLarge }
            out.append(contentsOf: chunk)
        }
        return out
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let stream: RequestBodyStream
        public mutating func next() async throws -> [UInt8]? { try await stream.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(stream: self) }
}
