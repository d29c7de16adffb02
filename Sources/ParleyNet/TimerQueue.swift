/// A binary min-heap of deadlines, owned by one event loop (not thread-safe by design).
struct TimerQueue {
    struct Entry {
        var deadline: Instant
        var id: UInt64
        var work: () -> Void
    }

    private var heap: [Entry] = []
    private var cancelled: Set<UInt64> = []
    private var nextID: UInt64 = 1

    var isEmpty: Bool { heap.isEmpty }
    var earliest: Instant? { heap.first?.deadline }

    mutating func schedule(at deadline: Instant, _ work: @escaping () -> Void) -> UInt64 {
        let id = nextID
        nextID += 1
        heap.append(Entry(deadline: deadline, id: id, work: work))
        siftUp(heap.count - 1)
        return id
    }

    mutating func cancel(_ id: UInt64) { cancelled.insert(id) }

    /// Removes and returns the work of every timer due at `now`, in deadline order.
    mutating func popExpired(now: Instant) -> [() -> Void] {
        var due: [() -> Void] = []
        while let first = heap.first, first.deadline <= now {
            let entry = removeFirst()
            if cancelled.remove(entry.id) == nil { due.append(entry.work) }
        }
        if heap.isEmpty { cancelled.removeAll() }
        return due
    }

    private mutating func removeFirst() -> Entry {
        let first = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            siftDown(0)
        }
        return first
    }

    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count, heap[right].deadline < heap[smallest].deadline { smallest = right }
            if smallest == parent { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
