/// A complete response: status, header fields and the whole body (at most the client's `maxResponseBytes`).
public struct HTTPClientResponse: Sendable {
    /// The HTTP version the response came over.
    public enum HTTPVersion: Sendable, Equatable {
        case http1_0, http1_1, http2, http3, unknown
    }

    public var status: Int
    /// Header fields in the order received, names lowercased. Interim (1xx) responses are not included.
    public var headers: [(String, String)]
    public var body: [UInt8]
    public var httpVersion: HTTPVersion

    public init(status: Int, headers: [(String, String)], body: [UInt8], httpVersion: HTTPVersion = .http1_1) {
        self.status = status
        self.headers = headers
        self.body = body
        self.httpVersion = httpVersion
    }

    /// The first value of the header field `name` (any case), or nil.
    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first(where: { $0.0 == lowered })?.1
    }

    /// Every value of the header field `name` (any case), in order.
    public func headers(named name: String) -> [String] {
        let lowered = name.lowercased()
        return headers.filter { $0.0 == lowered }.map(\.1)
    }
}
