/// Per-connection map from SQL text to the name of its server-side prepared statement, least recently
/// used first out. Pure: the driver sends the PREPARE / DEALLOCATE the answers call for.
struct StatementCache {
    struct Entry {
        var name: String
        var lastUsed: UInt64
    }

    let capacity: Int
    private var entries: [String: Entry] = [:]
    private var tick: UInt64 = 0
    private var nextNumber = 1

    init(capacity: Int) {
        self.capacity = max(0, capacity)
        entries.reserveCapacity(min(self.capacity, 1024))
    }

    var count: Int { entries.count }

    /// The statement name for `sql` if it is prepared, marking it most recently used.
    mutating func lookup(_ sql: String) -> String? {
        guard let index = entries.index(forKey: sql) else { return nil }
        tick &+= 1
        entries.values[index].lastUsed = tick
        return entries.values[index].name
    }

    /// Names a new statement for `sql`; `evicted` is a statement to deallocate first to stay within capacity.
    mutating func insert(_ sql: String) -> (name: String, evicted: String?) {
        var evicted: String?
        if entries.count >= capacity, let oldest = entries.min(by: { $0.value.lastUsed < $1.value.lastUsed }) {
            // O(n) but only on a miss with a full cache; hits stay O(1).
            evicted = oldest.value.name
            entries.removeValue(forKey: oldest.key)
        }
        let name = "parley_\(nextNumber)"
        nextNumber += 1
        tick &+= 1
        entries[sql] = Entry(name: name, lastUsed: tick)
        return (name, evicted)
    }

    /// Forgets `sql` (its PREPARE failed, or the server no longer has it).
    mutating func remove(_ sql: String) {
        entries.removeValue(forKey: sql)
    }

    mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
    }
}
