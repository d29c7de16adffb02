/// The request methods Parley knows (RFC 9110 §9). TRACE is known so that a known path answers it with 405 and
/// `Allow` (no route ever serves it: echoing requests back would expose credentials, RFC 9110 §9.3.8). QUERY (the
/// safe method with content of the IETF httpbis draft, which clients and API fuzzers already send) is known for the
/// same reason: no route serves it, a known path answers 405 with `Allow`, like any other method it does not serve.
///
/// The parser answers any other syntactically valid method (CONNECT, extension methods) with 501 (RFC 9110 §9.1).
public enum HTTPMethod: String, Sendable, Hashable, CaseIterable {
    case GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, TRACE, QUERY
}

/// The HTTP versions the parser accepts (RFC 9112 §2.3); any other `HTTP/d.d` is answered with 505.
public enum HTTPVersion: Sendable, Hashable {
    case http1_0, http1_1
}
