/// A growable FIFO queue with O(1) append and removal at the front (no swift-collections `Deque` here).
struct RingBuffer<Element> {
    private var storage: [Element?] = []
    private var head = 0
    private(set) var count = 0

    init() {}

    var isEmpty: Bool { count == 0 }

    var first: Element? { count == 0 ? nil : storage[head] }

    mutating func append(_ element: Element) {
        if count == storage.count { grow() }
        storage[(head + count) % storage.count] = element
        count += 1
    }

    mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head]
        storage[head] = nil
        head = (head + 1) % storage.count
        count -= 1
        return element
    }

    /// Empties the queue, returning its elements in order.
    mutating func removeAll() -> [Element] {
        var out: [Element] = []
        out.reserveCapacity(count)
        while let element = popFirst() { out.append(element) }
        head = 0
        return out
    }

    private mutating func grow() {
        let newCapacity = max(8, storage.count * 2)
        var grown: [Element?] = []
        grown.reserveCapacity(newCapacity)
        for i in 0..<count { grown.append(storage[(head + i) % storage.count]) }
        grown.append(contentsOf: repeatElement(nil, count: newCapacity - count))
        storage = grown
        head = 0
    }
}
