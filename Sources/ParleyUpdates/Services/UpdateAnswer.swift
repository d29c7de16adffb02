import Foundation
import ParleyCrypto
import ParleyHTTP

/// `GET /api/update/check`'s `data`.
struct UpdateCheckResult: Encodable {
    var needsUpdate: Bool
    var forceUpdate: Bool
    var info: UpdateInfo?

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(needsUpdate, forKey: .needsUpdate)
        try container.encode(forceUpdate, forKey: .forceUpdate)
        try container.encode(info, forKey: .info) // explicit null when there is no update
    }

    enum CodingKeys: String, CodingKey { case needsUpdate, forceUpdate, info }
}

/// The release a caller should update to, as the client SDK reads it (for iOS, `appStoreUrl` is never null).
struct UpdateInfo: Encodable {
    var versionCode: Int64
    var versionName: String
    var releaseNotes: String
    var appStoreUrl: String?
    var downloadUrl: String?
    var publishedAt: Date

    init(_ release: Release) {
        versionCode = release.versionCode
        versionName = release.versionName
        releaseNotes = release.releaseNotes
        // Every iOS answer carries `appStoreUrl` (the SDK decodes it as a non-optional string). New iOS releases
        // must have one; one stored before that rule offers its download URL there, the only place the device
        // can go (the table keeps one of the two), rather than hiding the update or failing the client's decode.
        appStoreUrl =
            release.platform == ReleaseInput.iOSPlatform
            ? release.appStoreUrl ?? release.downloadUrl : release.appStoreUrl
        downloadUrl = release.downloadUrl
        publishedAt = release.publishedAt
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(versionCode, forKey: .versionCode)
        try container.encode(versionName, forKey: .versionName)
        try container.encode(releaseNotes, forKey: .releaseNotes)
        try container.encode(appStoreUrl, forKey: .appStoreUrl)
        try container.encode(downloadUrl, forKey: .downloadUrl)
        try container.encode(publishedAt, forKey: .publishedAt)
    }

    enum CodingKeys: String, CodingKey {
        case versionCode, versionName, releaseNotes, appStoreUrl, downloadUrl, publishedAt
    }
}

/// One possible answer of an update check, encoded once when the release list is loaded: the 200 (envelope,
/// `ETag`) and the 304 for a client that already has it. A check picks one and copies it (no encoding, no
/// hashing per request). A class, so that handing one around is a single retain.
public final class UpdateAnswer: Sendable {
    /// The strong entity tag: a quoted SHA-256 prefix of the body.
    public let etag: String
    let full: HTTPResponse
    let notModified: HTTPResponse

    init(_ result: UpdateCheckResult) {
        let body = Envelope.success(result)
        etag = "\"" + Hex.encode(SHA256.hash(body).prefix(16)) + "\""
        var full = HTTPResponse.json(status: 200, body: body)
        full.headers.add(name: "etag", value: etag)
        // The answer depends on the caller (rollout, token): shared caches keep none, clients revalidate.
        full.headers.add(name: "cache-control", value: "private, no-cache")
        self.full = full
        var headers = HTTPHeaders()
        headers.add(name: "etag", value: etag)
        headers.add(name: "cache-control", value: "private, no-cache")
        notModified = HTTPResponse(status: 304, headers: headers)
    }

    /// The 304 when `ifNoneMatch` lists this answer's tag (or `*`), else the 200.
    public func response(ifNoneMatch: String?) -> HTTPResponse {
        guard let ifNoneMatch, EntityTags.list(ifNoneMatch, matches: etag) else { return full }
        return notModified
    }

    static let noUpdate = UpdateAnswer(UpdateCheckResult(needsUpdate: false, forceUpdate: false, info: nil))
}

/// `If-None-Match` (RFC 9110 §13.1.2): a comma-separated list of entity tags, or `*`; compared weakly (a `W/`
/// prefix is ignored).
enum EntityTags {
    static func list(_ header: String, matches etag: String) -> Bool {
        for element in header.split(separator: ",") {
            var tag = element.drop { $0 == " " || $0 == "\t" }
            while let last = tag.last, last == " " || last == "\t" { tag = tag.dropLast() }
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
            if tag == etag { return true }
        }
        return false
    }
}
