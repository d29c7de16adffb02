import Glibc

/// A moment in SigV4's two formats: `20130524T000000Z` (`x-amz-date`) and `20130524` (the credential scope).
public struct AWSTimestamp: Sendable, Equatable {
    public let unixSeconds: Int64
    public let amzDate: String
    public var dateStamp: String { String(amzDate.prefix(8)) }

    public init(unixSeconds: Int64) {
        self.unixSeconds = unixSeconds
        var seconds = time_t(unixSeconds)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func digits(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        amzDate =
            digits(parts.tm_year + 1900, 4) + digits(parts.tm_mon + 1, 2) + digits(parts.tm_mday, 2) + "T"
            + digits(parts.tm_hour, 2) + digits(parts.tm_min, 2) + digits(parts.tm_sec, 2) + "Z"
    }

    /// The current wall-clock time.
    public static func now() -> AWSTimestamp {
        AWSTimestamp(unixSeconds: Int64(time(nil)))
    }
}
