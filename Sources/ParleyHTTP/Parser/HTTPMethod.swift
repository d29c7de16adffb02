/// The request methods Parley implements (RFC 9110 §9).
///
/// The parser answers any other syntactically valid method with 501 (RFC 9110 §9.1).
public enum HTTPMethod: String, Sendable, Hashable, CaseIterable {
    case GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS
}

/// The HTTP versions the parser accepts (RFC 9112 §2.3); any other `HTTP/d.d` is answered with 505.
public enum HTTPVersion: Sendable, Hashable {
    case http1_0, http1_1
}
