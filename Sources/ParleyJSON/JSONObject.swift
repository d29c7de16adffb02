/// An object that keeps its keys in input order; keys are unique (the parser rejects duplicates).
///
/// Keys compare as Swift strings, i.e. by Unicode canonical equivalence, the same as `Dictionary`:
/// "\u00e9" and "e\u0301" are one key. Equality ignores order (two objects are equal when they
/// hold the same members), while iteration and serialization follow the stored order.
///
/// Lookups scan small objects linearly and use a hash index above `indexThreshold` members, so
/// neither a typical request body nor a hostile 100,000-key object costs quadratic time.
public struct JSONObject: Sendable {
    public typealias Element = (key: String, value: JSONValue)

    /// Stored as a struct rather than the `Element` tuple: arrays of tuples are destroyed and
    /// copied through generic value witnesses at run time, which shows in a profile of parsing
    /// (`perf record` on `swift test --filter JSONParser`).
    struct Member {
        var key: String
        var value: JSONValue
    }

    var entries: [Member]
    /// Key -> position in `entries`; present exactly when `entries.count > indexThreshold`.
    var index: [String: Int]?

    /// Member count above which an object carries a hash index.
    static let indexThreshold = 16

    public init() {
        self.entries = []
        self.index = nil
    }

    /// Builds an object from pairs in order; a later duplicate key replaces the earlier value and
    /// keeps the earlier position.
    public init(_ pairs: [(String, JSONValue)]) {
        self.init()
        entries.reserveCapacity(pairs.count)
        for (key, value) in pairs { self[key] = value }
    }

    /// For the parser, which has already checked the keys for duplicates and built the index of
    /// large objects.
    init(uniqueEntries: [Member], index: [String: Int]?) {
        self.entries = uniqueEntries
        self.index = uniqueEntries.count > Self.indexThreshold ? (index ?? Self.buildIndex(uniqueEntries)) : nil
    }

    /// The keys in stored order.
    public var keys: [String] { entries.map(\.key) }

    /// The values in stored order.
    public var values: [JSONValue] { entries.map(\.value) }

    /// The member named `key`. Setting a new key appends it; setting an existing key replaces the
    /// value in place; setting nil removes the member.
    public subscript(key: String) -> JSONValue? {
        get {
            guard let position = position(of: key) else { return nil }
            return entries[position].value
        }
        set {
            if let position = position(of: key) {
                if let newValue {
                    entries[position].value = newValue
                } else {
                    entries.remove(at: position)
                    // Positions after the removed one shift, so the index is rebuilt (or dropped).
                    index = entries.count > Self.indexThreshold ? Self.buildIndex(entries) : nil
                }
            } else if let newValue {
                entries.append(Member(key: key, value: newValue))
                if index != nil {
                    index![key] = entries.count - 1
                } else if entries.count > Self.indexThreshold {
                    index = Self.buildIndex(entries)
                }
            }
        }
    }

    /// Position of `key` in stored order.
    public func position(of key: String) -> Int? {
        if let index { return index[key] }
        return entries.firstIndex { $0.key == key }
    }

    static func buildIndex(_ entries: [Member]) -> [String: Int] {
        var index: [String: Int] = [:]
        index.reserveCapacity(entries.count)
        for (position, entry) in entries.enumerated() { index[entry.key] = position }
        return index
    }
}

extension JSONObject: RandomAccessCollection {
    public typealias Index = Int

    public var startIndex: Int { 0 }
    public var endIndex: Int { entries.count }
    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }

    public subscript(position: Int) -> Element {
        let member = entries[position]
        return (key: member.key, value: member.value)
    }
}

extension JSONObject: Hashable {
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for member in lhs.entries {
            guard rhs[member.key] == member.value else { return false }
        }
        return true
    }

    /// Order-independent, to agree with `==`: each member is hashed on its own and the results
    /// are summed, as `Dictionary` does.
    public func hash(into hasher: inout Hasher) {
        var sum = 0
        for member in entries {
            var memberHasher = Hasher()
            memberHasher.combine(member.key)
            memberHasher.combine(member.value)
            sum = sum &+ memberHasher.finalize()
        }
        hasher.combine(entries.count)
        hasher.combine(sum)
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }
}

extension JSONObject: CustomStringConvertible {
    public var description: String { JSONValue.object(self).serializedString }
}
