/// A subscription's number on its connection (`sid`), unique for the client's lifetime.
public struct NATSSubscriptionID: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt64

    public init(_ rawValue: UInt64) { self.rawValue = rawValue }

    public var description: String { String(rawValue) }
}

/// A message the server delivered (MSG, or HMSG with headers).
public struct NATSMessage: Sendable, Hashable {
    public var subject: String
    public var subscription: NATSSubscriptionID
    public var replyTo: String?
    /// Present for HMSG only.
    public var headers: NATSHeaders?
    public var payload: [UInt8]

    public init(
        subject: String, subscription: NATSSubscriptionID, replyTo: String? = nil, headers: NATSHeaders? = nil,
        payload: [UInt8]
    ) {
        self.subject = subject
        self.subscription = subscription
        self.replyTo = replyTo
        self.headers = headers
        self.payload = payload
    }
}

/// An HMSG's header block: `NATS/1.0[ status[ description]]` and then `Name: value` lines, in order.
public struct NATSHeaders: Sendable, Hashable {
    public struct Field: Sendable, Hashable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// An inline status (503 "no responders", 408, ...), when the version line has one.
    public var status: Int?
    public var statusDescription: String?
    public var fields: [Field]

    public init(status: Int? = nil, statusDescription: String? = nil, fields: [Field] = []) {
        self.status = status
        self.statusDescription = statusDescription
        self.fields = fields
    }

    /// The values of the fields named `name` (case-insensitively), in order.
    public func values(for name: String) -> [String] {
        let wanted = name.lowercased()
        return fields.filter { $0.name.lowercased() == wanted }.map(\.value)
    }
}
