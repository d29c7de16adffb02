import Foundation
import ParleyBytes
import ParleyJSON

/// What a handler returns. Bodies are bytes; JSON answers go through `HTTPResponse.envelope`.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// Set on a 101 answer: the connection's byte stream is handed to this protocol afterwards.
    public var upgrade: HTTPUpgrade?
    /// The server closes the connection after this response.
    public var closeConnection: Bool = false
    /// A body sent from an open file with `sendfile` instead of `body` (downloads); `Content-Length` is its length.
    public var file: ResponseFile?
    /// Fields fixed per resource (a download's ETag, type, disposition), in wire form since the resource was
    /// loaded; written after `headers`.
    public var staticHeaders = HTTPStaticHeaders()

    public init(
        status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [], upgrade: HTTPUpgrade? = nil
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.upgrade = upgrade
    }

    /// `{"code":0,"message":"ok","data":<data>}` with status 200.
    public static func ok<T: Encodable>(_ data: T, status: Int = 200) -> HTTPResponse {
        json(status: status, body: Envelope.success(data))
    }

    /// The success envelope around `data`, JSON the caller already wrote (hot paths that skip JSONEncoder).
    public static func ok(json data: [UInt8], status: Int = 200) -> HTTPResponse {
        json(status: status, body: Envelope.success(json: data))
    }

    /// `{"code":0,"message":"ok","data":null}`.
    public static func ok(status: Int = 200) -> HTTPResponse {
        json(status: status, body: Envelope.successEmpty)
    }

    /// The error envelope with the error's status and headers.
    public static func error(_ error: APIError) -> HTTPResponse {
        var response = json(status: error.status, body: Envelope.failure(error))
        for (name, value) in error.headers { response.headers.replaceOrAdd(name: name, value: value) }
        return response
    }

    public static func json(status: Int, body: [UInt8]) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.reserveCapacity(4) // content-type, x-request-id and a couple more without regrowing
        headers.appendLowercased(name: "content-type", value: "application/json; charset=utf-8")
        return HTTPResponse(status: status, headers: headers, body: body)
    }
}
