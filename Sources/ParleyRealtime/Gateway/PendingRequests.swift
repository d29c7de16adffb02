/// A connection's request frames waiting for their answers (they are answered one at a time, in order), kept as
/// the text that arrived: a frame is parsed when its turn comes, so a backlog holds its bytes, not a JSON tree
/// several times their size. Bounded twice: past `maxCount` frames reading pauses (a fast client waits), and
/// past `maxBytes` (queued plus the one being answered) the connection is closed, 4004: a client that sends more
/// than that without waiting for answers is flooding, and memory per connection stays bounded whatever it sends.
///
/// Pure: the gateway connection calls it on its loop and runs what it answers.
struct PendingRequests {
    let maxCount: Int
    let maxBytes: Int
    private var texts: [String] = []
    private var head = 0
    /// Bytes queued plus those of the frame being answered.
    private(set) var bytes = 0
    private var inFlightBytes = 0
    private(set) var readingPaused = false

    init(maxCount: Int, maxBytes: Int) {
        self.maxCount = maxCount
        self.maxBytes = maxBytes
    }

    enum Admission: Equatable {
        /// Queued; `pauseReading`: the backlog just reached `maxCount`, stop reading until it halves.
        case queued(pauseReading: Bool)
        /// Over `maxBytes`: close the connection (nothing was queued).
        case overflow
    }

    var count: Int { texts.count - head }
    var isEmpty: Bool { count == 0 }

    mutating func received(_ text: String) -> Admission {
        let size = text.utf8.count
        guard bytes + size <= maxBytes else { return .overflow }
        texts.append(text)
        bytes += size
        guard count >= maxCount, !readingPaused else { return .queued(pauseReading: false) }
        readingPaused = true
        return .queued(pauseReading: true)
    }

    /// The next frame to answer; its bytes count until `answered`.
    mutating func takeNext() -> String? {
        guard head < texts.count else { return nil }
        let text = texts[head]
        texts[head] = ""
        head += 1
        if head == texts.count {
            texts.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 && head * 2 >= texts.count {
            texts.removeFirst(head)
            head = 0
        }
        inFlightBytes = text.utf8.count
        return text
    }

    /// The frame taken last is answered. True when reading, paused for the backlog, may resume.
    mutating func answered() -> Bool {
        bytes -= inFlightBytes
        inFlightBytes = 0
        guard readingPaused, count < maxCount / 2 else { return false }
        readingPaused = false
        return true
    }

    mutating func removeAll() {
        texts = []
        head = 0
        bytes = 0
        inFlightBytes = 0
    }
}
