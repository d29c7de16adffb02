import Foundation

/// What a server says about itself in INFO (at connect, and again later with protocol 1: cluster changes, lame
/// duck mode). Only the fields this client reads; unknown ones are ignored.
public struct NATSServerInfo: Sendable, Hashable, Decodable {
    public var serverID: String
    public var serverName: String?
    public var version: String?
    /// The protocol version the server speaks (1: asynchronous INFO, `echo`).
    public var proto: Int?
    /// Whether the server understands HPUB/HMSG.
    public var headers: Bool?
    /// The largest message (headers and payload) the server accepts.
    public var maxPayload: Int?
    public var authRequired: Bool?
    public var tlsRequired: Bool?
    /// Other servers of the cluster clients may use.
    public var connectURLs: [String]?
    /// The server is shutting down gracefully and will close client connections over a while.
    public var lameDuckMode: Bool?

    enum CodingKeys: String, CodingKey {
        case serverID = "server_id"
        case serverName = "server_name"
        case version, proto, headers
        case maxPayload = "max_payload"
        case authRequired = "auth_required"
        case tlsRequired = "tls_required"
        case connectURLs = "connect_urls"
        case lameDuckMode = "ldm"
    }

    public init(serverID: String, maxPayload: Int? = nil) {
        self.serverID = serverID
        self.maxPayload = maxPayload
    }

    /// Reads INFO's JSON object.
    static func decode(_ json: ArraySlice<UInt8>) throws(NATSProtocolError) -> NATSServerInfo {
        do {
            return try JSONDecoder().decode(NATSServerInfo.self, from: Data(json))
        } catch let error as DecodingError {
            throw .invalidInfo(Self.summary(of: error))
        } catch {
            throw .invalidInfo("not JSON")
        }
    }

    /// A short reason without the input (which the server controls).
    private static func summary(of error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, _): "missing \(key.stringValue)"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            "wrong type at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        case .dataCorrupted: "not a JSON object"
        @unknown default: "not a JSON object"
        }
    }
}
