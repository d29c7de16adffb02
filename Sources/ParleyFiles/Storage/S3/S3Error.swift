import ParleyHTTPClient

/// Failures of `S3BlobStorage`.
public enum S3Error: Error, Sendable, Equatable, CustomStringConvertible {
    /// The configuration cannot work (endpoint not `http(s)://host[:port]`, bucket name unusable).
    case invalidConfiguration(String)
    /// `store` was handed something that is not a SHA-256 in lowercase hex.
    case invalidPayloadHash(String)
    /// S3 answered with an error document (`<Error><Code>NoSuchBucket</Code>...`).
    case service(status: Int, code: String, message: String, requestID: String?)
    /// S3 answered an unexpected status without an error document (HEAD responses carry none).
    case unexpectedStatus(Int)
    /// The request got no answer.
    case transport(HTTPClientError)

    public var description: String {
        switch self {
        case .invalidConfiguration(let message): "S3 configuration: \(message)"
        case .invalidPayloadHash(let hash): "not a SHA-256 hex digest: \(hash)"
        case .service(let status, let code, let message, let requestID):
            "S3 \(status) \(code): \(message)" + (requestID.map { " (request \($0))" } ?? "")
        case .unexpectedStatus(let status): "S3 answered \(status)"
        case .transport(let error): "S3 unreachable: \(error)"
        }
    }

    /// The error for a response S3 refused: its `<Error>` document's code and message when there is one.
    static func from(_ response: HTTPClientResponse) -> S3Error {
        let document = String(decoding: response.body, as: UTF8.self)
        guard let code = xmlElement("Code", in: document) else { return .unexpectedStatus(response.status) }
        return .service(
            status: response.status, code: code, message: xmlElement("Message", in: document) ?? "",
            requestID: xmlElement("RequestId", in: document) ?? response.header("x-amz-request-id"))
    }

    /// The text of the first `<name>...</name>` in `document`, entities decoded. S3's error documents are flat
    /// and small; this is not a general XML parser.
    static func xmlElement(_ name: String, in document: String) -> String? {
        guard let open = document.firstRange(of: "<\(name)>"),
            let close = document[open.upperBound...].firstRange(of: "</\(name)>")
        else { return nil }
        return decodeEntities(document[open.upperBound..<close.lowerBound])
    }

    private static func decodeEntities(_ text: Substring) -> String {
        guard text.contains("&") else { return String(text) }
        var result = ""
        var rest = text
        while let amp = rest.firstIndex(of: "&") {
            result += rest[..<amp]
            rest = rest[amp...]
            guard let semicolon = rest.firstIndex(of: ";") else { break }
            let entity = rest[rest.index(after: rest.startIndex)..<semicolon]
            switch entity {
            case "amp": result += "&"
            case "lt": result += "<"
            case "gt": result += ">"
            case "quot": result += "\""
            case "apos": result += "'"
            default:
                let number =
                    entity.hasPrefix("#x")
                    ? UInt32(entity.dropFirst(2), radix: 16)
                    : entity.hasPrefix("#") ? UInt32(entity.dropFirst()) : nil
                if let number, let scalar = Unicode.Scalar(number) {
                    result.unicodeScalars.append(scalar)
                } else {
                    result += rest[...semicolon]
                }
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return result + rest
    }
}
