/// The path parameters of a matched route, by name. A route has one or two, so a short array scanned in order
/// beats a dictionary (no hashing, one allocation only when there is a parameter at all).
public struct PathParameters: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    private var names: [String] = []
    private var values: [String] = []

    public init() {}

    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { self[name] = value }
    }

    public var isEmpty: Bool { names.isEmpty }
    public var count: Int { names.count }

    /// The value of `name`; setting nil removes it.
    public subscript(name: String) -> String? {
        get {
            guard let index = names.firstIndex(of: name) else { return nil }
            return values[index]
        }
        set {
            if let index = names.firstIndex(of: name) {
                if let newValue {
                    values[index] = newValue
                } else {
                    names.remove(at: index)
                    values.remove(at: index)
                }
            } else if let newValue {
                names.append(name)
                values.append(newValue)
            }
        }
    }

    public static func == (lhs: PathParameters, rhs: PathParameters) -> Bool {
        lhs.count == rhs.count && zip(lhs.names, lhs.values).allSatisfy { rhs[$0.0] == $0.1 }
    }
}
