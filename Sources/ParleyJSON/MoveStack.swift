/// A growable stack the parser moves finished elements out of, so closing an array or object
/// hands its elements over without the retain/release pair per element that copying a slice of
/// an `Array` and then removing it would cost.
struct MoveStack<Element>: ~Copyable {
    private var base: UnsafeMutablePointer<Element>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 4)
        self.base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    mutating func push(_ element: consuming Element) {
        if count == capacity { grow() }
        (base + count).initialize(to: element)
        count += 1
    }

    /// Calls `body` with the elements from `start` to the top, in place.
    func withElements<R>(from start: Int, _ body: (UnsafeBufferPointer<Element>) -> R) -> R {
        body(UnsafeBufferPointer(start: base + start, count: count - start))
    }

    /// Moves the elements from `start` to the top into an array, leaving `start` as the new top.
    mutating func popArray(from start: Int) -> [Element] {
        let moved = count - start
        guard moved > 0 else { return [] }
        let source = base + start
        let array = [Element](unsafeUninitializedCapacity: moved) { buffer, initialized in
            buffer.baseAddress!.moveInitialize(from: source, count: moved)
            initialized = moved
        }
        count = start
        return array
    }

    /// Moves element `offset` (from the bottom) out; the caller must then discard that slot with
    /// `discardMoved(from:)` without reading it again.
    func take(_ offset: Int) -> Element {
        (base + offset).move()
    }

    /// Forgets the slots from `start` up, whose elements have all been moved out with `take`.
    mutating func discardMoved(from start: Int) {
        count = start
    }

    private mutating func grow() {
        let newCapacity = capacity * 2
        let newBase = UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
        newBase.moveInitialize(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }
}
