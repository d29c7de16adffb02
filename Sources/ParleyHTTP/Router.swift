import Glibc

/// A request handler: a plain async function from request and context to response.
public typealias HTTPHandler = @Sendable (HTTPRequest, RequestContext) async throws -> HTTPResponse

/// An optional synchronous first try of a route: it answers at once when it can (a cached download, a health
/// check) and returns nil when the answer needs to wait (the async handler then runs). Answered this way, a
/// request costs no task at all; scripts/profile-http counts the difference.
public typealias HTTPImmediateHandler = @Sendable (HTTPRequest, inout RequestContext) throws -> HTTPResponse?

/// Per-route options.
public struct RouteOptions: Sendable {
    /// Largest accepted body; over it the server answers 413 before reading the body.
    public var bodyLimit: Int?
    /// Hand the body to the handler as a stream instead of buffering it (uploads).
    public var streamBody: Bool
    /// A name for metrics and logs; defaults to the pattern.
    public var name: String?

    public init(bodyLimit: Int? = nil, streamBody: Bool = false, name: String? = nil) {
        self.bodyLimit = bodyLimit
        self.streamBody = streamBody
        self.name = name
    }
}

/// A registered route. A class: a match hands it through the request path, and a reference costs one retain
/// where a struct of strings and closures costs one per field.
public final class Route: Sendable {
    public let method: HTTPMethod
    public let pattern: String
    public let options: RouteOptions
    public let handler: HTTPHandler
    public let immediate: HTTPImmediateHandler?
    /// Position in registration order (0, 1, ...): lets per-route state (metric series) live in an array.
    public let id: Int
    /// The name for metrics and logs: `options.name`, else the pattern.
    public let metricName: String

    init(
        method: HTTPMethod, pattern: String, options: RouteOptions, handler: @escaping HTTPHandler,
        immediate: HTTPImmediateHandler?, id: Int
    ) {
        self.method = method
        self.pattern = pattern
        self.options = options
        self.handler = handler
        self.immediate = immediate
        self.id = id
        self.metricName = options.name ?? pattern
    }
}

/// The outcome of matching a method and path.
public enum RouteMatch: Sendable {
    case found(Route, parameters: PathParameters)
    case methodNotAllowed(allowed: [HTTPMethod], pattern: String)
    case notFound
}

/// Matches paths segment by segment: literal segments, `{name}` parameters (one segment,
/// percent-decoded) and a final `{name...}` catch-all (the rest of the path, slashes included).
/// Built once at start-up, then read concurrently without locks.
public struct Router: Sendable {
    private struct Node: Sendable {
        /// Literal children as bytes, scanned in order: cheaper than hashing the segment for the few children a
        /// node has.
        var literals: [(bytes: [UInt8], node: Int)] = []
        var parameter: (name: String, node: Int)?
        var catchAll: (name: String, node: Int)?
        /// A path has a route for one to a few methods: scanned in order, no hashing.
        var routes: [(method: HTTPMethod, route: Route)] = []

        func route(for method: HTTPMethod) -> Route? {
            for entry in routes where entry.method == method { return entry.route }
            return nil
        }
        var pattern: String = ""
    }

    private var nodes: [Node] = [Node()]
    public private(set) var routes: [Route] = []

    public init() {}

    public mutating func add(
        _ method: HTTPMethod, _ pattern: String, options: RouteOptions = RouteOptions(),
        immediate: HTTPImmediateHandler? = nil, _ handler: @escaping HTTPHandler
    ) {
        precondition(pattern.hasPrefix("/"), "route pattern must start with /: \(pattern)")
        var current = 0
        let segments = pattern.split(separator: "/", omittingEmptySubsequences: true)
        for (index, segment) in segments.enumerated() {
            if segment.hasPrefix("{") && segment.hasSuffix("...}") {
                precondition(index == segments.count - 1, "catch-all must be the last segment: \(pattern)")
                let name = String(segment.dropFirst().dropLast(4))
                if let existing = nodes[current].catchAll {
                    current = existing.node
                } else {
                    let created = newNode()
                    nodes[current].catchAll = (name, created)
                    current = created
                }
            } else if segment.hasPrefix("{") && segment.hasSuffix("}") {
                let name = String(segment.dropFirst().dropLast())
                if let existing = nodes[current].parameter {
                    precondition(existing.name == name, "conflicting parameter names at \(pattern)")
                    current = existing.node
                } else {
                    let created = newNode()
                    nodes[current].parameter = (name, created)
                    current = created
                }
            } else {
                let key = Array(segment.utf8)
                if let existing = nodes[current].literals.first(where: { $0.bytes == key }) {
                    current = existing.node
                } else {
                    let created = newNode()
                    nodes[current].literals.append((key, created))
                    current = created
                }
            }
        }
        precondition(nodes[current].route(for: method) == nil, "duplicate route \(method) \(pattern)")
        let route = Route(
            method: method, pattern: pattern, options: options, handler: handler, immediate: immediate,
            id: routes.count)
        nodes[current].routes.append((method, route))
        nodes[current].pattern = pattern
        routes.append(route)
    }

    private mutating func newNode() -> Int {
        nodes.append(Node())
        return nodes.count - 1
    }

    public mutating func get(
        _ pattern: String, options: RouteOptions = RouteOptions(), _ handler: @escaping HTTPHandler
    ) {
        add(.GET, pattern, options: options, handler)
    }
    /// A GET route that usually answers synchronously (`immediate`), falling back to `handler` when it cannot.
    public mutating func get(
        _ pattern: String, options: RouteOptions = RouteOptions(),
        immediate: @escaping HTTPImmediateHandler, _ handler: @escaping HTTPHandler
    ) {
        add(.GET, pattern, options: options, immediate: immediate, handler)
    }
    public mutating func post(
        _ pattern: String, options: RouteOptions = RouteOptions(), _ handler: @escaping HTTPHandler
    ) {
        add(.POST, pattern, options: options, handler)
    }
    public mutating func put(
        _ pattern: String, options: RouteOptions = RouteOptions(), _ handler: @escaping HTTPHandler
    ) {
        add(.PUT, pattern, options: options, handler)
    }
    public mutating func patch(
        _ pattern: String, options: RouteOptions = RouteOptions(), _ handler: @escaping HTTPHandler
    ) {
        add(.PATCH, pattern, options: options, handler)
    }
    public mutating func delete(
        _ pattern: String, options: RouteOptions = RouteOptions(), _ handler: @escaping HTTPHandler
    ) {
        add(.DELETE, pattern, options: options, handler)
    }

    /// Finds the route for `method` and `path` (the raw path, without the query). HEAD falls back to GET.
    public func match(method: HTTPMethod, path: String) -> RouteMatch {
        var parameters = PathParameters()
        guard let nodeIndex = find(path: path, parameters: &parameters) else { return .notFound }
        let routes = nodes[nodeIndex].routes
        if routes.isEmpty { return .notFound }
        for entry in routes where entry.method == method { return .found(entry.route, parameters: parameters) }
        if method == .HEAD, let route = nodes[nodeIndex].route(for: .GET) {
            return .found(route, parameters: parameters)
        }
        var allowed = Set(routes.map(\.method))
        if allowed.contains(.GET) { allowed.insert(.HEAD) }
        return .methodNotAllowed(
            allowed: HTTPMethod.allCases.filter { allowed.contains($0) }, pattern: nodes[nodeIndex].pattern)
    }

    private func find(path: String, parameters: inout PathParameters) -> Int? {
        var path = path
        return path.withUTF8 { bytes -> Int? in
            nodes.withUnsafeBufferPointer { nodes -> Int? in
                Router.find(bytes, nodes: nodes, parameters: &parameters)
            }
        }
    }

    private static func find(
        _ path: UnsafeBufferPointer<UInt8>, nodes: UnsafeBufferPointer<Node>,
        parameters: inout PathParameters
    ) -> Int? {
        let slash = UInt8(ascii: "/")
        guard path.first == slash else { return nil }
        var current = 0
        var index = 0
        // Segment by segment without building an array of them; empty segments (`//`) are skipped.
        while true {
            while index < path.count && path[index] == slash { index += 1 }
            if index == path.count { return current }
            var end = index
            while end < path.count && path[end] != slash { end += 1 }
            let segment = UnsafeBufferPointer(rebasing: path[index..<end])
            if let next = literalChild(nodes[current], segment) {
                current = next
            } else if let (name, next) = nodes[current].parameter {
                // A parameter is one segment; decoding after splitting keeps %2F inside it.
                guard let value = decodeParameter(segment) else { return nil }
                parameters[name] = value
                current = next
            } else if let (name, next) = nodes[current].catchAll {
                // The rest of the path as sent, from this segment on (empty segments kept).
                guard let value = decodeParameter(UnsafeBufferPointer(rebasing: path[index...])) else { return nil }
                parameters[name] = value
                return next
            } else {
                return nil
            }
            index = end
        }
    }

    @inline(__always)
    private static func literalChild(_ node: borrowing Node, _ segment: UnsafeBufferPointer<UInt8>) -> Int? {
        for literal in node.literals where literal.bytes.count == segment.count {
            if literal.bytes.withUnsafeBufferPointer({
                memcmp($0.baseAddress!, segment.baseAddress!, segment.count) == 0
            }) {
                return literal.node
            }
        }
        return nil
    }

    private static func decodeParameter(_ raw: UnsafeBufferPointer<UInt8>) -> String? {
        guard !raw.contains(0) else { return nil }
        // Most parameters hold no escape: one string made straight from the bytes.
        guard raw.contains(UInt8(ascii: "%")) else { return String(decoding: raw, as: UTF8.self) }
        guard let value = PercentDecoding.decode(Substring(decoding: raw, as: UTF8.self)), !value.utf8.contains(0)
        else { return nil }
        return value
    }
}
