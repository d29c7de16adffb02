import Synchronization

/// A Prometheus-style metrics registry. Series are created once and kept by their users, so the
/// hot path only touches a lock held for a few nanoseconds (never a dictionary lookup by name).
public final class MetricsRegistry: Sendable {
    private let families = Mutex<[String: any MetricFamily]>([:])
    private let order = Mutex<[String]>([])

    public init() {}

    public func counter(_ name: String, help: String, labels: [String] = []) -> CounterFamily {
        family(name) { CounterFamily(name: name, help: help, labelNames: labels) }
    }

    public func gauge(_ name: String, help: String, labels: [String] = []) -> GaugeFamily {
        family(name) { GaugeFamily(name: name, help: help, labelNames: labels) }
    }

    public func histogram(
        _ name: String, help: String, labels: [String] = [],
        buckets: [Double] = Histogram.defaultLatencyBuckets
    ) -> HistogramFamily {
        family(name) { HistogramFamily(name: name, help: help, labelNames: labels, buckets: buckets) }
    }

    /// Registers a gauge whose value is read at scrape time (open connections, pool usage).
    public func gaugeFunction(
        _ name: String, help: String, _ read: @escaping @Sendable () -> [([String: String], Double)]
    ) {
        _ = family(name) { FunctionGauge(name: name, help: help, read: read) }
    }

    private func family<F: MetricFamily>(_ name: String, make: () -> F) -> F {
        families.withLock { map in
            if let existing = map[name] as? F { return existing }
            let created = make()
            map[name] = created
            order.withLock { $0.append(name) }
            return created
        }
    }

    /// The Prometheus text exposition format, version 0.0.4.
    public func render() -> String {
        let names = order.withLock { $0 }
        let snapshot = families.withLock { $0 }
        var out = ""
        for name in names {
            guard let family = snapshot[name] else { continue }
            family.render(into: &out)
        }
        return out
    }
}

protocol MetricFamily: Sendable {
    func render(into out: inout String)
}

func renderLabels(_ names: [String], _ values: [String], extra: String? = nil) -> String {
    var parts: [String] = []
    for (name, value) in zip(names, values) {
        parts.append("\(name)=\"\(escapeLabel(value))\"")
    }
    if let extra { parts.append(extra) }
    return parts.isEmpty ? "" : "{" + parts.joined(separator: ",") + "}"
}

func escapeLabel(_ value: String) -> String {
    var out = ""
    for ch in value {
        switch ch {
        case "\\": out += "\\\\"
        case "\"": out += "\\\""
        case "\n": out += "\\n"
        default: out.append(ch)
        }
    }
    return out
}

func formatNumber(_ value: Double) -> String {
    if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
    return String(value)
}

public final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    public init() {}
    public func increment(by amount: Int = 1) { value.add(amount, ordering: .relaxed) }
    public var current: Int { value.load(ordering: .relaxed) }
}

public final class CounterFamily: MetricFamily {
    let name: String
    let help: String
    let labelNames: [String]
    private let series = Mutex<[[String]: Counter]>([:])

    init(name: String, help: String, labelNames: [String]) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
    }

    public func labels(_ values: String...) -> Counter { labels(values) }

    public func labels(_ values: [String]) -> Counter {
        series.withLock { map in
            if let c = map[values] { return c }
            let c = Counter()
            map[values] = c
            return c
        }
    }

    func render(into out: inout String) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) counter\n"
        let snapshot = series.withLock { $0 }
        for (values, counter) in snapshot.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            out += "\(name)\(renderLabels(labelNames, values)) \(counter.current)\n"
        }
    }
}

public final class Gauge: Sendable {
    private let value = Atomic<Int>(0)
    public init() {}
    public func set(_ v: Int) { value.store(v, ordering: .relaxed) }
    public func add(_ v: Int) { value.add(v, ordering: .relaxed) }
    public var current: Int { value.load(ordering: .relaxed) }
}

public final class GaugeFamily: MetricFamily {
    let name: String
    let help: String
    let labelNames: [String]
    private let series = Mutex<[[String]: Gauge]>([:])

    init(name: String, help: String, labelNames: [String]) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
    }

    public func labels(_ values: String...) -> Gauge {
        series.withLock { map in
            if let g = map[values] { return g }
            let g = Gauge()
            map[values] = g
            return g
        }
    }

    func render(into out: inout String) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n"
        let snapshot = series.withLock { $0 }
        for (values, gauge) in snapshot.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            out += "\(name)\(renderLabels(labelNames, values)) \(gauge.current)\n"
        }
    }
}

final class FunctionGauge: MetricFamily {
    let name: String
    let help: String
    let read: @Sendable () -> [([String: String], Double)]

    init(name: String, help: String, read: @escaping @Sendable () -> [([String: String], Double)]) {
        self.name = name
        self.help = help
        self.read = read
    }

    func render(into out: inout String) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n"
        for (labels, value) in read() {
            let keys = labels.keys.sorted()
            out += "\(name)\(renderLabels(keys, keys.map { labels[$0]! })) \(formatNumber(value))\n"
        }
    }
}

/// Cumulative histogram with fixed buckets (seconds for latencies). Lock-free: every request observes one, from
/// every event loop at once, and a shared lock there made the loops wait for each other.
public final class Histogram: @unchecked Sendable {
    public static let defaultLatencyBuckets: [Double] = [
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]

    let bounds: [Double]
    /// Non-cumulative counts per bucket, the last one for values above every bound (render() accumulates).
    private let counts: UnsafeMutablePointer<Atomic<Int>>
    /// The sum's bit pattern, added to with compare-and-swap.
    private let sumBits = Atomic<UInt64>(0.0.bitPattern)

    init(bounds: [Double]) {
        self.bounds = bounds
        counts = .allocate(capacity: bounds.count + 1)
        for index in 0...bounds.count { (counts + index).initialize(to: Atomic(0)) }
    }

    deinit {
        counts.deinitialize(count: bounds.count + 1)
        counts.deallocate()
    }

    public func observe(_ value: Double) {
        let index = bounds.firstIndex(where: { value <= $0 }) ?? bounds.count
        counts[index].add(1, ordering: .relaxed)
        var current = sumBits.load(ordering: .relaxed)
        while true {
            let (exchanged, original) = sumBits.compareExchange(
                expected: current, desired: (Double(bitPattern: current) + value).bitPattern, ordering: .relaxed)
            if exchanged { break }
            current = original
        }
    }

    /// Counts per bucket (the last above every bound), the sum, and the count (the buckets' total, so that the
    /// `+Inf` bucket and `_count` always agree even while observations land).
    func snapshot() -> (counts: [Int], sum: Double, count: Int) {
        let values = (0...bounds.count).map { counts[$0].load(ordering: .relaxed) }
        return (
            Array(values.prefix(bounds.count)), Double(bitPattern: sumBits.load(ordering: .relaxed)),
            values.reduce(0, +)
        )
    }
}

public final class HistogramFamily: MetricFamily {
    let name: String
    let help: String
    let labelNames: [String]
    let buckets: [Double]
    private let series = Mutex<[[String]: Histogram]>([:])

    init(name: String, help: String, labelNames: [String], buckets: [Double]) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
        self.buckets = buckets
    }

    public func labels(_ values: String...) -> Histogram { labels(values) }

    public func labels(_ values: [String]) -> Histogram {
        series.withLock { map in
            if let h = map[values] { return h }
            let h = Histogram(bounds: buckets)
            map[values] = h
            return h
        }
    }

    func render(into out: inout String) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        let snapshot = series.withLock { $0 }
        for (values, histogram) in snapshot.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            let s = histogram.snapshot()
            var cumulative = 0
            for (bound, count) in zip(histogram.bounds, s.counts) {
                cumulative += count
                out += "\(name)_bucket\(renderLabels(labelNames, values, extra: "le=\"\(bound)\"")) \(cumulative)\n"
            }
            out += "\(name)_bucket\(renderLabels(labelNames, values, extra: "le=\"+Inf\"")) \(s.count)\n"
            out += "\(name)_sum\(renderLabels(labelNames, values)) \(s.sum)\n"
            out += "\(name)_count\(renderLabels(labelNames, values)) \(s.count)\n"
        }
    }
}
