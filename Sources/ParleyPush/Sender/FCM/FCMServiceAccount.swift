import ParleyCrypto
import ParleyJSON

/// A Google service-account key file (the JSON the Firebase console downloads): who signs (`client_email`), with
/// which key (`private_key`, PEM PKCS #8 RSA), for which project, and where its OAuth 2.0 tokens come from.
public struct FCMServiceAccount: Sendable {
    public static let defaultTokenURI = "https://oauth2.googleapis.com/token"
    /// Service-account files are a few kilobytes.
    public static let maxFileBytes = 64 * 1024

    public var projectId: String
    public var clientEmail: String
    /// The key's id, sent as the assertion's `kid` when the file names it.
    public var privateKeyId: String?
    public var key: RSA.SigningKey
    public var tokenURI: String

    /// Why a file is not a usable service account.
    public struct Invalid: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// Parses and checks the file: a JSON object (of `type` `service_account` when it says) with `project_id`,
    /// `client_email` and an RSA `private_key`, and an http(s) `token_uri` (Google's when absent).
    public init(json: [UInt8]) throws(Invalid) {
        guard json.count <= Self.maxFileBytes else { throw Invalid(description: "larger than 64 KiB") }
        guard let value = try? JSONValue.parse(json), case .object(let object) = value else {
            throw Invalid(description: "not a JSON object")
        }
        if let type = object["type"], type.stringValue != "service_account" {
            throw Invalid(description: "type is not \"service_account\"")
        }
        func required(_ field: String) throws(Invalid) -> String {
            guard let text = object[field]?.stringValue, !text.isEmpty else {
                throw Invalid(description: "\(field) is missing")
            }
            return text
        }
        projectId = try required("project_id")
        clientEmail = try required("client_email")
        let pem = try required("private_key")
        do {
            key = try RSA.SigningKey(pem: pem)
        } catch {
            throw Invalid(description: "private_key is not a PEM RSA key (\(error))")
        }
        privateKeyId = object["private_key_id"]?.stringValue
        tokenURI = object["token_uri"]?.stringValue ?? Self.defaultTokenURI
        guard PushEndpoints.isURL(tokenURI) else { throw Invalid(description: "token_uri is not an http(s) URL") }
        guard projectId.utf8.allSatisfy(Self.isProjectIDByte) else {
            throw Invalid(description: "project_id has characters a project id never has")
        }
    }

    /// Project ids are lower-case letters, digits and hyphens (and travel in the send URL's path).
    static func isProjectIDByte(_ byte: UInt8) -> Bool {
        (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x30 && byte <= 0x39) || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".")
    }
}
