/// What the connection driver must do after an event; ``WebSocketConnectionStateMachine`` returns them.
public enum WebSocketAction: Sendable, Hashable {
    /// A complete, valid text message for the application.
    case deliverText(String)
    /// A complete binary message for the application.
    case deliverBinary([UInt8])
    case sendPing([UInt8])
    case sendPong([UInt8])
    /// Send a Close frame (after whatever is already queued); no data may follow it.
    case sendClose(WebSocketCloseCode, reason: String)
    /// Close the TCP connection once what is queued (our Close frame) is written (§7.1.1: the server
    /// closes first).
    case closeTransport
    /// Close the TCP connection now, discarding unsent bytes: the peer stopped answering or reading.
    case dropTransport
}

/// Up to two actions, stored inline: an event never needs more (e.g. `.sendClose` then `.closeTransport`),
/// and the per-frame path allocates nothing to return them.
public struct WebSocketActions: Sequence, Sendable, Hashable, ExpressibleByArrayLiteral, CustomStringConvertible {
    private var first: WebSocketAction?
    private var second: WebSocketAction?

    public static let none = WebSocketActions()

    public init() {}

    public init(_ action: WebSocketAction) { first = action }

    public init(arrayLiteral elements: WebSocketAction...) {
        precondition(elements.count <= 2, "WebSocketActions holds at most two actions")
        first = elements.first
        second = elements.count > 1 ? elements[1] : nil
    }

    public var isEmpty: Bool { first == nil }

    public var count: Int { first == nil ? 0 : (second == nil ? 1 : 2) }

    public func makeIterator() -> Iterator { Iterator(actions: self) }

    public struct Iterator: IteratorProtocol {
        var actions: WebSocketActions
        var position = 0
        public mutating func next() -> WebSocketAction? {
            defer { position += 1 }
            switch position {
            case 0: return actions.first
            case 1: return actions.second
            default: return nil
            }
        }
    }

    public var description: String { "[" + map { "\($0)" }.joined(separator: ", ") + "]" }
}
