/// What CONNECT tells the server about this client.
public struct NATSConnectOptions: Sendable, Hashable {
    public var name: String
    public var lang: String = "swift"
    public var version: String = NATSConnectOptions.clientVersion
    /// Deliver this connection's own publishes to its matching subscriptions.
    public var echo: Bool = true
    /// Accept HMSG; false unless a caller uses headers.
    public var headers: Bool = false
    public var user: String?
    public var password: String?
    public var token: String?

    /// This client's version as CONNECT reports it.
    public static let clientVersion = "1.0.0"

    public init(name: String, echo: Bool = true, headers: Bool = false) {
        self.name = name
        self.echo = echo
        self.headers = headers
    }

    /// `configuration`'s options with the credentials of `server`.
    init(configuration: NATSConfiguration, server: NATSServerURL) {
        self.init(name: configuration.name, echo: configuration.echo, headers: configuration.headers)
        user = server.user
        password = server.password
        token = server.token
    }
}

/// Writes client operations (STYLE.md: pure, no I/O). Subjects, reply subjects and queue groups must have passed
/// `NATSSubject`'s checks: this only writes bytes.
public enum NATSEncoder {
    /// `CONNECT {...}`: verbose and pedantic off (no `+OK` per operation), protocol 1 (asynchronous INFO, echo).
    public static func connect(_ options: NATSConnectOptions, into out: inout [UInt8]) {
        append("CONNECT {\"verbose\":false,\"pedantic\":false,\"name\":", to: &out)
        appendJSONString(options.name, to: &out)
        append(",\"lang\":", to: &out)
        appendJSONString(options.lang, to: &out)
        append(",\"version\":", to: &out)
        appendJSONString(options.version, to: &out)
        append(",\"protocol\":1,\"echo\":", to: &out)
        append(options.echo ? "true" : "false", to: &out)
        append(",\"headers\":", to: &out)
        append(options.headers ? "true" : "false", to: &out)
        if let user = options.user {
            append(",\"user\":", to: &out)
            appendJSONString(user, to: &out)
        }
        if let password = options.password {
            append(",\"pass\":", to: &out)
            appendJSONString(password, to: &out)
        }
        if let token = options.token {
            append(",\"auth_token\":", to: &out)
            appendJSONString(token, to: &out)
        }
        append("}\r\n", to: &out)
    }

    /// `PUB subject [reply] size\r\npayload\r\n`.
    public static func publish(
        subject: String, replyTo: String? = nil, payload: UnsafeRawBufferPointer, into out: inout [UInt8]
    ) {
        // Geometric: reserving the exact size on every call would copy the whole buffer each time.
        let needed = out.count + publishSize(subject: subject, replyTo: replyTo, payloadCount: payload.count)
        if out.capacity < needed { out.reserveCapacity(max(needed, out.capacity * 2)) }
        append("PUB ", to: &out)
        out.append(contentsOf: subject.utf8)
        out.append(UInt8(ascii: " "))
        if let replyTo {
            out.append(contentsOf: replyTo.utf8)
            out.append(UInt8(ascii: " "))
        }
        appendDecimal(UInt64(payload.count), to: &out)
        append("\r\n", to: &out)
        out.append(contentsOf: payload)
        append("\r\n", to: &out)
    }

    public static func publish(subject: String, replyTo: String? = nil, payload: [UInt8], into out: inout [UInt8]) {
        payload.withUnsafeBytes { publish(subject: subject, replyTo: replyTo, payload: $0, into: &out) }
    }

    /// The bytes `publish` writes.
    public static func publishSize(subject: String, replyTo: String?, payloadCount: Int) -> Int {
        4 + subject.utf8.count + 1 + (replyTo.map { $0.utf8.count + 1 } ?? 0) + decimalDigits(UInt64(payloadCount))
            + 2 + payloadCount + 2
    }

    /// `SUB subject [queue] sid`.
    public static func subscribe(subject: String, queue: String?, sid: NATSSubscriptionID, into out: inout [UInt8]) {
        append("SUB ", to: &out)
        out.append(contentsOf: subject.utf8)
        out.append(UInt8(ascii: " "))
        if let queue {
            out.append(contentsOf: queue.utf8)
            out.append(UInt8(ascii: " "))
        }
        appendDecimal(sid.rawValue, to: &out)
        append("\r\n", to: &out)
    }

    /// `UNSUB sid [max]`: with `max`, the server removes the subscription once it has delivered that many
    /// messages in all.
    public static func unsubscribe(sid: NATSSubscriptionID, max: Int? = nil, into out: inout [UInt8]) {
        append("UNSUB ", to: &out)
        appendDecimal(sid.rawValue, to: &out)
        if let max {
            out.append(UInt8(ascii: " "))
            appendDecimal(UInt64(Swift.max(0, max)), to: &out)
        }
        append("\r\n", to: &out)
    }

    public static func ping(into out: inout [UInt8]) { append("PING\r\n", to: &out) }

    public static func pong(into out: inout [UInt8]) { append("PONG\r\n", to: &out) }

    // MARK: Pieces

    private static func append(_ literal: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    static func appendDecimal(_ value: UInt64, to out: inout [UInt8]) {
        if value < 10 {
            out.append(UInt8(truncatingIfNeeded: value) + 0x30)
            return
        }
        let start = out.count
        var rest = value
        while rest > 0 {
            out.append(UInt8(truncatingIfNeeded: rest % 10) + 0x30)
            rest /= 10
        }
        out[start...].reverse()
    }

    static func decimalDigits(_ value: UInt64) -> Int {
        var digits = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        return digits
    }

    /// A JSON string (RFC 8259 §7): quotes, backslashes and control characters escaped.
    static func appendJSONString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): append("\\\"", to: &out)
            case UInt8(ascii: "\\"): append("\\\\", to: &out)
            case 0x0A: append("\\n", to: &out)
            case 0x0D: append("\\r", to: &out)
            case 0x09: append("\\t", to: &out)
            case 0x00..<0x20:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                append("\\u00", to: &out)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
