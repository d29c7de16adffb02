import ParleyJSON

/// The answer to an upload (`UploadedFile` in openapi.yaml).
public struct UploadedFile: Sendable, Equatable {
    /// The server's name for the file; messages reference it.
    public var objectKey: String
    /// A signed download URL (an hour by default), no token needed.
    public var url: String
    public var urlExpireAt: String
    /// SHA-256 of the content, lowercase hex.
    public var hash: String
    public var size: Int64
    /// From the content's magic bytes, e.g. `image/png`.
    public var mimeType: String
    public var name: String

    public init(json: JSONValue) throws(ParleyAPIError) {
        objectKey = try json.required("objectKey")
        url = try json.required("url")
        urlExpireAt = json["urlExpireAt"]?.stringValue ?? ""
        hash = json["hash"]?.stringValue ?? ""
        size = try json.requiredInt("size")
        mimeType = json["mimeType"]?.stringValue ?? "application/octet-stream"
        name = json["name"]?.stringValue ?? objectKey
    }
}
