import ParleyObservability

/// `parley_quota_refusals_total{kind}`: requests refused by a quota or a rate limit of issue 18's item 9. Every
/// feature that enforces one counts here (the registry hands each the same family); every kind is registered up
/// front, so a scrape shows 0 rather than no series.
public struct QuotaRefusals: Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        case storageUser = "storage_user"
        case storageApp = "storage_app"
        case uploadRate = "upload_rate"
        case sendRate = "send_rate"
        case registration
    }

    private let counters: [Counter]

    public init(metrics: MetricsRegistry) {
        let family = metrics.counter(
            "parley_quota_refusals_total", help: "Requests refused by a quota or rate limit, by kind.",
            labels: ["kind"])
        counters = Kind.allCases.map { family.labels($0.rawValue) }
    }

    public func count(_ kind: Kind) {
        counters[Kind.allCases.firstIndex(of: kind)!].increment()
    }
}
