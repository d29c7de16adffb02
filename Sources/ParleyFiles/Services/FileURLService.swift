import Foundation
import ParleyHTTP
import ParleyJSON

/// Issues signed download URLs for the keys a caller may read (`POST /api/files/urls`).
public struct FileURLService: Sendable {
    let configuration: FilesConfiguration
    let signer: FileURLSigner
    let repository: FileRepository

    public struct SignedURL: Sendable, Encodable, Equatable {
        public var objectKey: String
        public var url: String
        public var urlExpireAt: String
    }

    public struct Answer: Sendable, Encodable, Equatable {
        public var urls: [SignedURL]
        /// Keys the caller may not read or that do not exist (one answer for both: no probing of other users' keys).
        public var denied: [String]
    }

    /// `disposition`: what the URL grants; `inline` still serves anything but raster images, audio and video as an
    /// attachment (`DownloadSafety`).
    func url(
        objectKey: String, expiresAt: Int64, baseURL: String, disposition: ContentDisposition.Kind = .inline
    ) -> String {
        let appId = ObjectKey.appId(of: objectKey) ?? 0
        return "\(configuration.publicBaseURL ?? baseURL)/files/\(objectKey)?"
            + signer.query(objectKey: objectKey, expiresAt: expiresAt, appId: appId, disposition: disposition)
    }

    /// `disposition`: `inline` (nil: the default) or `attachment`, signed into every URL.
    func sign(
        objectKeys: [String], ttlSeconds: Int?, appId: Int64, userId: String, baseURL: String,
        disposition: String? = nil, now: Date = Date()
    ) async throws -> Answer {
        guard let disposition = disposition.map(ContentDisposition.Kind.init(rawValue:)) ?? .inline else {
            throw APIError.validationFailed.with(message: "`disposition` must be `inline` or `attachment`")
        }
        let ttl = ttlSeconds ?? configuration.defaultURLTTLSeconds
        guard (1...configuration.maxURLTTLSeconds).contains(ttl) else {
            throw APIError.validationFailed.with(
                message: "`ttl` must be 1 to \(configuration.maxURLTTLSeconds) seconds")
        }
        guard !objectKeys.isEmpty, objectKeys.count <= 100 else {
            throw APIError.validationFailed.with(message: "`objectKeys` must hold 1 to 100 keys")
        }
        let wellFormed = objectKeys.filter { ObjectKey.appId(of: $0) == appId }
        let readable =
            wellFormed.isEmpty
            ? []
            : try await repository.readable(appId: appId, userId: userId, objectKeys: Array(Set(wellFormed)))
        let expiresAt = Int64(now.timeIntervalSince1970) + Int64(ttl)
        let expireText = ISO8601.format(Date(timeIntervalSince1970: TimeInterval(expiresAt)))
        var answer = Answer(urls: [], denied: [])
        var seen = Set<String>()
        for key in objectKeys where seen.insert(key).inserted {
            if readable.contains(key) {
                answer.urls.append(
                    SignedURL(
                        objectKey: key,
                        url: url(objectKey: key, expiresAt: expiresAt, baseURL: baseURL, disposition: disposition),
                        urlExpireAt: expireText))
            } else {
                answer.denied.append(key)
            }
        }
        return answer
    }
}
