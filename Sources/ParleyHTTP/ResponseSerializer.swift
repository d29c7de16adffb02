import Glibc
import ParleyBytes
import ParleyObservability

/// Turns a response into wire bytes (RFC 9112 §4, §6). Pure apart from the date it is given.
public struct ResponseSerializer: Sendable {
    public init() {}

    public func serialize(_ response: HTTPResponse, requestMethod: HTTPMethod, requestVersion: HTTPVersion,
                          keepAlive: Bool, date: [UInt8]) -> [UInt8] {
        let status = response.status
        // RFC 9110 §6.4.1: no content for HEAD, 1xx, 204 and 304.
        let bodyAllowed = requestMethod != .HEAD && status >= 200 && status != 204 && status != 304
        var out: [UInt8] = []
        out.reserveCapacity(160 + (bodyAllowed ? response.body.count : 0))
        if status >= 100 && status < 600 {
            out.append(contentsOf: ResponseSerializer.statusLines[status])
        } else {
            out.append(contentsOf: "HTTP/1.1 \(status) \(HTTPStatusText.reason(status))\r\n".utf8)
        }
        for (name, value) in response.headers {
            // Framing headers are the serializer's job, never the handler's.
            if name == "content-length" || name == "connection" || name == "transfer-encoding" || name == "date" { continue }
            appendHeader(canonicalName(name), value, to: &out)
        }
        if status >= 200 && status != 204 && status != 304 {
            out.append(contentsOf: "Content-Length: ".utf8)
            DecimalASCII.append(response.file.map { Int($0.length) } ?? response.body.count, to: &out)
            out.append(contentsOf: "\r\n".utf8)
        }
        out.append(contentsOf: "Date: ".utf8)
        out.append(contentsOf: date)
        out.append(contentsOf: "\r\n".utf8)
        if status == 101 {
            out.append(contentsOf: "Connection: Upgrade\r\n".utf8)
        } else if !keepAlive {
            out.append(contentsOf: "Connection: close\r\n".utf8)
        } else if requestVersion == .http1_0 {
            out.append(contentsOf: "Connection: keep-alive\r\n".utf8)
        }
        out.append(contentsOf: "\r\n".utf8)
        if bodyAllowed && response.file == nil { out.append(contentsOf: response.body) }
        return out
    }

    private func appendHeader(_ name: String, _ value: String, to out: inout [UInt8]) {
        var name = name
        name.withUTF8 { out.append(contentsOf: $0) }
        out.append(UInt8(ascii: ":"))
        out.append(UInt8(ascii: " "))
        var value = value
        value.withUTF8 { bytes in
            // Response splitting guard: CR and LF never reach the wire inside a value.
            if bytes.contains(0x0D) || bytes.contains(0x0A) {
                for byte in bytes where byte != 0x0D && byte != 0x0A { out.append(byte) }
            } else {
                out.append(contentsOf: bytes)
            }
        }
        out.append(UInt8(ascii: "\r"))
        out.append(UInt8(ascii: "\n"))
    }

    /// `HTTP/1.1 200 OK\r\n` for every status, built once.
    private static let statusLines: [[UInt8]] = (0..<600).map {
        Array("HTTP/1.1 \($0) \(HTTPStatusText.reason($0))\r\n".utf8)
    }

    /// `content-type` -> `Content-Type` (header names are stored lowercased).
    func canonicalName(_ name: String) -> String {
        // The two names nearly every response carries, compared by length first (cheaper than a hash).
        let length = name.utf8.count
        if length == 12 && name == "content-type" { return "Content-Type" }
        if length == 12 && name == "x-request-id" { return "X-Request-Id" }
        if let known = ResponseSerializer.knownNames[name] { return known }
        var result = ""
        result.reserveCapacity(name.utf8.count)
        var upper = true
        for ch in name {
            result.append(upper ? Character(ch.uppercased()) : ch)
            upper = ch == "-"
        }
        return result
    }

    private static let knownNames: [String: String] = {
        let names = ["Content-Type", "X-Request-Id", "Allow", "Retry-After", "ETag", "Last-Modified", "Cache-Control",
                     "Content-Disposition", "Content-Range", "Accept-Ranges", "Location", "Upgrade",
                     "Sec-WebSocket-Accept", "Sec-WebSocket-Protocol", "Sec-WebSocket-Version", "WWW-Authenticate", "Vary",
                     "X-Content-Type-Options", "Content-Encoding", "Expires", "Pragma"]
        return Dictionary(uniqueKeysWithValues: names.map { ($0.lowercased(), $0) })
    }()

    /// IMF-fixdate (RFC 9110 §5.6.7), e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
    public static func httpDate(_ seconds: time_t) -> String {
        var t = seconds
        var tm = tm()
        gmtime_r(&t, &tm)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func pad(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(days[Int(tm.tm_wday)]), \(pad(tm.tm_mday)) \(months[Int(tm.tm_mon)]) \(tm.tm_year + 1900) \(pad(tm.tm_hour)):\(pad(tm.tm_min)):\(pad(tm.tm_sec)) GMT"
    }
}
