import ParleyAuth
import ParleyHTTP

/// The storage quotas of one upload's user and app, with the bytes they held when it began. A pure value: the
/// upload checks what it is about to add (from `Content-Length`, then from what it spooled); the commit checks
/// the counters again in its transaction (`FileRepository.insert`), which is the check that holds under races.
public struct StorageQuota: Sendable, Hashable {
    /// nil: unlimited.
    public var userQuotaBytes: Int64?
    public var appQuotaBytes: Int64?
    public var userBytes: Int64
    public var appBytes: Int64

    public init(userQuotaBytes: Int64?, appQuotaBytes: Int64?, userBytes: Int64, appBytes: Int64) {
        self.userQuotaBytes = userQuotaBytes
        self.appQuotaBytes = appQuotaBytes
        self.userBytes = userBytes
        self.appBytes = appBytes
    }

    public static let unlimited = StorageQuota(userQuotaBytes: nil, appQuotaBytes: nil, userBytes: 0, appBytes: 0)

    /// The quota that adding `bytes` would exceed, the user's first; nil when both have room. The app's counts
    /// only `newContent`: a content the app already stores does not grow its usage (known once the upload is
    /// hashed; before that, only the user's quota is checked).
    public func exceeded(adding bytes: Int64, newContent: Bool) -> QuotaRefusals.Kind? {
        if let quota = userQuotaBytes, userBytes > quota - bytes { return .storageUser }
        if newContent, let quota = appQuotaBytes, appBytes > quota - bytes { return .storageApp }
        return nil
    }

    /// The most bytes one upload may still add to the user's files (nil: no quota). The app's quota sets no such
    /// bound: a content the app already stores costs it nothing, and only the hash tells.
    public var remainingUserBytes: Int64? {
        userQuotaBytes.map { max(0, $0 - userBytes) }
    }

    /// The client-facing refusal for `kind`.
    public func error(_ kind: QuotaRefusals.Kind) -> APIError {
        switch kind {
        case .storageApp:
            APIError.appStorageQuotaExceeded.with(
                message: "this app's storage quota (\(appQuotaBytes ?? 0) bytes) is used up")
        default:
            APIError.userStorageQuotaExceeded.with(
                message: "your storage quota (\(userQuotaBytes ?? 0) bytes) does not leave room for this file")
        }
    }
}

/// A commit refused in its transaction because the counters, updated by it, passed a quota.
struct StorageQuotaExceeded: Error {
    var kind: QuotaRefusals.Kind
}
