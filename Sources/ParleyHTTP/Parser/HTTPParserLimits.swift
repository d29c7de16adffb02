/// Size limits enforced by ``HTTPRequestParser`` while it parses, so that no oversized input is ever buffered.
public struct HTTPParserLimits: Sendable {
    /// Largest request line plus header lines (each with its CRLF, without the final empty line) -> 431.
    /// The trailer section of a chunked body counts against the same budget.
    public var maxHeaderBytes: Int
    /// Default body limit of every request -> 413. The driver may change it per request with
    /// ``HTTPRequestParser/setBodyLimit(_:)`` after the head has been emitted.
    public var maxBodyBytes: Int

    public init(maxHeaderBytes: Int = 16 * 1024, maxBodyBytes: Int = 1 << 20) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
    }
}
