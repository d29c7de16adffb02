/// Per-connection map from SQL text (and the parameter types it was prepared with) to the name of its
/// server-side prepared statement, least recently used first out. Pure: the driver sends the PREPARE /
/// DEALLOCATE the answers call for.
struct StatementCache {
    struct Entry {
        var name: String
        /// Parameter type OIDs of the PREPARE: the same text bound with other Swift types (an `Int` where a
        /// `Double` was) is a different statement, or its results would come back in the old types.
        var types: [UInt32]
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

    /// The statement name for `sql` if it is prepared with these parameter types, marking it most recently used.
    mutating func lookup(_ sql: String, binds: [PostgresValue]) -> String? {
        guard let index = entries.index(forKey: sql) else { return nil }
        let types = entries.values[index].types
        guard types.count == binds.count else { return nil }
        for i in 0..<binds.count where types[i] != binds[i].typeOID { return nil }
        tick &+= 1
        entries.values[index].lastUsed = tick
        return entries.values[index].name
    }

    /// Names a new statement for `sql`; `evicted` is a statement to deallocate first: the same text prepared
    /// with other parameter types, or the least recently used one when the cache is full.
    mutating func insert(_ sql: String, binds: [PostgresValue]) -> (name: String, evicted: String?) {
        var evicted: String?
        if let existing = entries.removeValue(forKey: sql) {
            evicted = existing.name
        } else if entries.count >= capacity, let oldest = entries.min(by: { $0.value.lastUsed < $1.value.lastUsed }) {
            // O(n) but only on a miss with a full cache; hits stay O(1).
            evicted = oldest.value.name
            entries.removeValue(forKey: oldest.key)
        }
        let name = "parley_\(nextNumber)"
        nextNumber += 1
        tick &+= 1
        entries[sql] = Entry(name: name, types: binds.map(\.typeOID), lastUsed: tick)
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
