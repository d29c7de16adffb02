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

    public init(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [], upgrade: HTTPUpgrade? = nil) {
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

/// An open file descriptor, closed when the last holder lets go: a cache of open blobs and the responses
/// sending one may hold it at once, and eviction from the cache never closes a file under a response.
public final class FileDescriptorHandle: Sendable {
    public let descriptor: Int32

    public init(owning descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }
}

/// A byte range of an open file, sent by the connection with `sendfile(2)` (zero-copy, never held in memory).
/// The descriptor stays open while the response holds it.
public final class ResponseFile: Sendable {
    public let handle: FileDescriptorHandle
    public let offset: Int64
    public let length: Int64
    public var descriptor: Int32 { handle.descriptor }

    /// A range of a file opened for this response alone (closed when the response is done).
    public convenience init(descriptor: Int32, offset: Int64, length: Int64) {
        self.init(handle: FileDescriptorHandle(owning: descriptor), offset: offset, length: length)
    }

    /// A range of a shared open file (sendfile reads at an explicit offset, so sharers never disturb each other).
    public init(handle: FileDescriptorHandle, offset: Int64, length: Int64) {
        self.handle = handle
        self.offset = offset
        self.length = length
    }
}

/// Encodes Parley's response envelope. Success bodies are built around the encoded `data` so the
/// envelope keys keep a fixed order (`code`, `message`, `data`).
public enum Envelope {
    public static let successEmpty: [UInt8] = Array(#"{"code":0,"message":"ok","data":null}"#.utf8)

    public static func success<T: Encodable>(_ data: T) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        out.append(contentsOf: #"{"code":0,"message":"ok","data":"#.utf8)
        do {
            try JSONCoding.bytesEncoder.encode(data, into: &out)
        } catch {
            out.append(contentsOf: "null".utf8)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    public static func success(json data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(data.count + 34)
        out.append(contentsOf: #"{"code":0,"message":"ok","data":"#.utf8)
        out.append(contentsOf: data)
        out.append(UInt8(ascii: "}"))
        return out
    }

    public static func failure(_ error: APIError) -> [UInt8] {
        var out: [UInt8] = Array(#"{"code":"#.utf8)
        out.append(contentsOf: String(error.code).utf8)
        out.append(contentsOf: #","message":"#.utf8)
        appendJSONString(error.message, to: &out)
        out.append(contentsOf: #","data":null}"#.utf8)
        return out
    }

    static func appendJSONString(_ s: String, to out: inout [UInt8]) {
        JSONString.append(s, to: &out)
    }
}

/// Shared JSON coders with Parley's conventions: ISO 8601 UTC dates, sorted keys for stable output.
public enum JSONCoding {
    public static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(ISO8601.format(date))
        }
        return encoder
    }()

    /// The same bytes as `encoder` (sorted keys, unescaped slashes, ISO 8601 date strings), several times faster.
    public static let bytesEncoder = JSONBytesEncoder(dateWriter: { date, out in
        out.append(UInt8(ascii: "\""))
        ISO8601.append(date, to: &out)
        out.append(UInt8(ascii: "\""))
    })

    public static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}

/// ISO 8601 UTC with milliseconds, e.g. `2026-12-01T02:03:04.123Z`.
public enum ISO8601 {
    /// `2026-12-01T14:16:51.492Z` (UTC, milliseconds truncated).
    public static func format(_ date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The same 24 bytes appended to `out`, with no string or libc call on the way (every message frame carries one
    /// or two).
    public static func append(_ date: Date, to out: inout [UInt8]) {
        let interval = date.timeIntervalSince1970
        let floored = floor(interval)
        guard floored.magnitude < 253_402_300_800 else { // beyond year 9999: the general formatter
            out.append(contentsOf: general(date).utf8)
            return
        }
        let (days, secondOfDay) = CivilCalendar.floorDivide(Int64(floored), 86_400)
        let (year, month, day) = CivilCalendar.date(fromDays: days)
        guard year >= 0 && year <= 9999 else {
            out.append(contentsOf: general(date).utf8)
            return
        }
        let seconds = Int(secondOfDay)
        DecimalASCII.appendPadded(Int(year), width: 4, to: &out)
        out.append(UInt8(ascii: "-"))
        DecimalASCII.appendPadded(Int(month), width: 2, to: &out)
        out.append(UInt8(ascii: "-"))
        DecimalASCII.appendPadded(Int(day), width: 2, to: &out)
        out.append(UInt8(ascii: "T"))
        DecimalASCII.appendPadded(seconds / 3600, width: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        DecimalASCII.appendPadded(seconds / 60 % 60, width: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        DecimalASCII.appendPadded(seconds % 60, width: 2, to: &out)
        out.append(UInt8(ascii: "."))
        DecimalASCII.appendPadded(Int((interval - floored) * 1000), width: 3, to: &out)
        out.append(UInt8(ascii: "Z"))
    }

    /// Any date gmtime_r can express (years outside 0...9999 keep their own width).
    static func general(_ date: Date) -> String {
        var seconds = time_t(floor(date.timeIntervalSince1970))
        let millis = Int((date.timeIntervalSince1970 - Double(seconds)) * 1000)
        var tm = tm()
        gmtime_r(&seconds, &tm)
        func pad(_ v: Int32, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(tm.tm_year + 1900, 4))-\(pad(tm.tm_mon + 1, 2))-\(pad(tm.tm_mday, 2))T\(pad(tm.tm_hour, 2)):\(pad(tm.tm_min, 2)):\(pad(tm.tm_sec, 2)).\(pad(Int32(millis), 3))Z"
    }
}

/// Reason phrases for the status line (RFC 9110 §15).
enum HTTPStatusText {
    static func reason(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 101: "Switching Protocols"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 416: "Range Not Satisfiable"
        case 417: "Expectation Failed"
        case 422: "Unprocessable Content"
        case 426: "Upgrade Required"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: "Status \(status)"
        }
    }
}
