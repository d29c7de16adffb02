import ParleyJSON

/// The sending side of one connection under load. The gateway answers a connection's requests one at a time in
/// order, so a sender keeps up to `window` `send` requests in flight; with a `rate` it also waits until each
/// message is due (open loop), so that latency can be measured at a chosen throughput instead of at saturation,
/// where it only measures the length of the queue the window builds.
///
/// Made on the main thread and handed to its loop once (`Fleet.attach`); from then on loop-confined, like the
/// connection that owns it (hence `@unchecked Sendable`).
final class Sender: @unchecked Sendable {
    let window: Int
    /// Deliveries each stored message calls for: 1 to the other user of a pair, members - 1 in a group.
    let recipients: Int
    /// Messages per nanosecond for this sender; 0: as fast as the window allows.
    let ratePerNanosecond: Double
    /// Where in one message interval this sender starts (0..<1), so that paced senders do not fire together.
    let phase: Double
    /// Loop start (pacing counts from here) and the end of sending.
    var begin: Int64 = 0
    var end: Int64 = 0
    /// Requests sent; also the last `reqId` used.
    var issued: Int64 = 0
    var outstanding = 0
    /// The `reqId` whose answer comes next.
    var nextAnswer: Int64 = 1
    /// Requests answered with an `ack` (stored messages).
    var acked = 0
    /// Send times of the requests in flight, by `reqId % window` (answers come in request order).
    private var sentTimes: [Int64]

    // The request frame around the two values that change (request id, send time).
    private let head: [UInt8]
    private let middle: [UInt8]
    private let clientIdPrefix: [UInt8]
    private static let tail = Array(#""}}"#.utf8)

    /// `clientMsgIdPrefix` must be unique per sender and run: `clientMsgId`s make sends idempotent, so a reused
    /// one would be answered with the old message and never delivered.
    init(
        toId: String, chatType: String, recipients: Int, clientMsgIdPrefix: String, window: Int,
        messagesPerSecond: Double, phase: Double
    ) {
        self.window = window
        self.recipients = recipients
        sentTimes = Array(repeating: 0, count: window)
        ratePerNanosecond = messagesPerSecond / 1e9
        self.phase = phase
        head = Array(#"{"type":"send","reqId":""#.utf8)
        var middle = Array(#"","data":{"toId":"#.utf8)
        JSONString.append(toId, to: &middle)
        middle += Array(#","chatType":"#.utf8)
        JSONString.append(chatType, to: &middle)
        middle += Array(#","msgType":"text","content":"b"#.utf8)
        self.middle = middle
        var clientId = Array(#"","clientMsgId":"#.utf8)
        JSONString.append(clientMsgIdPrefix, to: &clientId)
        clientId.removeLast() // continue the string with the request number
        clientIdPrefix = clientId
    }

    /// May another request go out at `now`?
    func mayIssue(now: Int64) -> Bool {
        guard outstanding < window, now < end else { return false }
        if ratePerNanosecond == 0 { return true }
        return issued < Int64(Double(now - begin) * ratePerNanosecond + phase)
    }

    /// The next request: `{"type":"send","reqId":"N","data":{..., "content":"b<sentAt>","clientMsgId":"<prefix>N"}}`.
    func nextFrame(sentAt: Int64) -> [UInt8] {
        issued += 1
        outstanding += 1
        sentTimes[Int(issued % Int64(window))] = sentAt
        let number = Array(String(issued).utf8)
        var frame: [UInt8] = []
        frame.reserveCapacity(head.count + middle.count + clientIdPrefix.count + 2 * number.count + 32)
        frame += head
        frame += number
        frame += middle
        frame += Array(String(sentAt).utf8)
        frame += clientIdPrefix
        frame += number
        frame += Self.tail
        return frame
    }

    /// Records an answer: whether it was the one expected next, and when its request was sent.
    func answered(reqId: Int64?) -> (inOrder: Bool, sentAt: Int64) {
        outstanding -= 1
        let expected = nextAnswer
        nextAnswer += 1
        return (reqId == expected, sentTimes[Int(expected % Int64(window))])
    }
}
