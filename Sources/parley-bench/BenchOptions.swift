import Glibc

/// The `--name value` options after the mode. Names a mode does not know are refused, so that a typo in
/// scripts/bench-realtime fails the run instead of silently benchmarking the defaults.
struct BenchOptions {
    private var values: [String: String] = [:]

    init(_ arguments: ArraySlice<String>, allowed: Set<String>) throws(BenchError) {
        var iterator = arguments.makeIterator()
        while let name = iterator.next() {
            guard name.hasPrefix("--"), allowed.contains(String(name.dropFirst(2))) else {
                let known = allowed.sorted().map { "--" + $0 }.joined(separator: " ")
                throw BenchError("unknown option \(name) (known: \(known))")
            }
            guard let value = iterator.next() else { throw BenchError("option \(name) needs a value") }
            values[String(name.dropFirst(2))] = value
        }
    }

    func string(_ name: String, _ defaultValue: String? = nil) throws(BenchError) -> String {
        if let value = values[name] { return value }
        if let defaultValue { return defaultValue }
        throw BenchError("missing option --\(name)")
    }

    func int(_ name: String, _ defaultValue: Int, in range: ClosedRange<Int>) throws(BenchError) -> Int {
        guard let raw = values[name] else { return defaultValue }
        guard let value = Int(raw), range.contains(value) else {
            throw BenchError("--\(name) \(raw): expected a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    func double(_ name: String, _ defaultValue: Double, in range: ClosedRange<Double>) throws(BenchError) -> Double {
        guard let raw = values[name] else { return defaultValue }
        guard let value = Double(raw), range.contains(value) else {
            throw BenchError("--\(name) \(raw): expected a number in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// An environment variable that must be set (secrets stay off the command line, where `ps` shows them).
    static func environment(_ name: String) throws(BenchError) -> String {
        guard let raw = getenv(name), case let value = String(cString: raw), !value.isEmpty else {
            throw BenchError("environment variable \(name) is not set")
        }
        return value
    }
}
