import ParleyJSON

/// What a server frame is, as far as the benchmark cares.
enum ServerFrameKind {
    /// A `message`; `sentAt` is the sender's clock reading when it is one of ours (content `b<nanoseconds>`).
    case message(sentAt: Int64?)
    /// An `ack`; `reqId` when it is a number (senders number their requests 1, 2, 3...).
    case ack(reqId: Int64?)
    case error(code: Int64, message: String)
    case hello(heartbeatSeconds: Int?)
    /// A coalesced `presence` event and how many user entries it carries.
    case presence(entries: Int)
    case other(type: String)
    case malformed
}

/// Classifies server frames. The two frames that arrive by the tens of thousands per second, `message` and
/// `ack`, are recognised from the prefix the gateway writes (`ServerFrame.text` puts `type`, then `reqId`, first)
/// and only the few bytes needed are read: a full parse of every delivery would cost the client a good part of
/// the CPU the server needs on this 2-core machine. Anything else, and any frame the fast path does not
/// understand, goes through ParleyJSON's parser.
enum ServerFrameScanner {
    private static let messagePrefix = Array(#"{"type":"message","#.utf8)
    private static let ackPrefix = Array(#"{"type":"ack","reqId":""#.utf8)
    private static let contentKey = Array(#""content":"b"#.utf8)
    private static let presencePrefix = Array(#"{"type":"presence","#.utf8)
    private static let statusKey = Array(#""status":"#.utf8)

    static func scan(_ payload: [UInt8]) -> ServerFrameKind {
        payload.withUnsafeBufferPointer { bytes in
            if starts(bytes, with: messagePrefix),
                let at = ByteSearch.firstIndex(of: contentKey, in: bytes, from: messagePrefix.count),
                let (sentAt, _) = digits(bytes, from: at + contentKey.count, until: UInt8(ascii: "\""))
            {
                return .message(sentAt: sentAt)
            }
            if starts(bytes, with: presencePrefix) {
                var entries = 0
                var at = presencePrefix.count
                while let found = ByteSearch.firstIndex(of: statusKey, in: bytes, from: at) {
                    entries += 1
                    at = found + statusKey.count
                }
                return .presence(entries: entries)
            }
            if starts(bytes, with: ackPrefix) {
                return .ack(reqId: digits(bytes, from: ackPrefix.count, until: UInt8(ascii: "\""))?.value)
            }
            return parsed(bytes)
        }
    }

    /// The slow path: a full parse.
    private static func parsed(_ bytes: UnsafeBufferPointer<UInt8>) -> ServerFrameKind {
        guard let json = try? JSONValue.parse(bytes), let type = json["type"]?.stringValue else { return .malformed }
        let data = json["data"]
        switch type {
        case "message":
            guard let content = data?["content"]?.stringValue, content.hasPrefix("b"),
                let sentAt = Int64(content.dropFirst())
            else { return .message(sentAt: nil) }
            return .message(sentAt: sentAt)
        case "ack":
            return .ack(reqId: json["reqId"]?.stringValue.flatMap { Int64($0) })
        case "error":
            return .error(code: data?["code"]?.int64Value ?? -1, message: data?["message"]?.stringValue ?? "")
        case "hello":
            return .hello(heartbeatSeconds: data?["heartbeatSeconds"]?.int64Value.map { Int($0) })
        default:
            return .other(type: type)
        }
    }

    private static func starts(_ bytes: UnsafeBufferPointer<UInt8>, with prefix: [UInt8]) -> Bool {
        guard bytes.count >= prefix.count else { return false }
        for i in 0..<prefix.count where bytes[i] != prefix[i] { return false }
        return true
    }

    /// A run of 1-18 decimal digits ending at `terminator`.
    private static func digits(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, until terminator: UInt8)
        -> (value: Int64, end: Int)?
    {
        var value: Int64 = 0
        var i = start
        while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39, i - start < 18 {
            value = value * 10 + Int64(bytes[i] - 0x30)
            i += 1
        }
        guard i > start, i < bytes.count, bytes[i] == terminator else { return nil }
        return (value, i)
    }
}
