import Foundation
import ParleyAuth

/// One uploaded file as the service keeps it (a `files` row with its blob's storage key).
public struct StoredFile: Sendable, Hashable {
    public var objectKey: String
    public var appId: Int64
    public var ownerId: String
    public var sha256: String
    public var size: Int64
    public var mimeType: String
    public var ext: String
    public var name: String
    public var thumbnailKey: String?
    public var storageKey: String
    public var createdAt: Date
    /// Set on avatar records: whose avatar this copy was made for.
    public var avatarHolder: AvatarHolder? = nil
}

/// Per-app upload limits (`app_file_settings`), with the server's defaults filled in.
public struct FileLimits: Sendable, Hashable {
    public var maxFileBytes: Int64
    /// MIME types or `type/*` patterns; nil allows every type.
    public var allowedTypes: [String]?
    /// The uploader's and the app's storage quotas and usage when the upload began.
    public var quota: StorageQuota = .unlimited

    public func allows(mimeType: String) -> Bool {
        guard let allowedTypes else { return true }
        let major = mimeType.split(separator: "/", maxSplits: 1).first.map(String.init) ?? mimeType
        return allowedTypes.contains { pattern in
            pattern == mimeType || pattern == "*/*" || (pattern.hasSuffix("/*") && pattern.dropLast(2) == major)
        }
    }
}
