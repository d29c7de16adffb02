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
            appendHeader(name, value, to: &out)
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

    /// Writes a field line; the stored (lowercased) name goes out in its usual spelling (`content-type` ->
    /// `Content-Type`, `etag` -> `ETag`), converted while copied (no string, no lookup per header).
    private func appendHeader(_ name: String, _ value: String, to out: inout [UInt8]) {
        var name = name
        name.withUTF8 { Self.appendCanonicalName($0, to: &out) }
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

    /// Capitalises the first letter and each letter after `-`; the few registered names spelled otherwise
    /// (`ETag`, `WWW-Authenticate`, `Sec-WebSocket-*`) are special-cased.
    static func appendCanonicalName(_ name: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        let lowercaseA = UInt8(ascii: "a"), lowercaseZ = UInt8(ascii: "z"), dash = UInt8(ascii: "-")
        var start = 0
        if name.count == 4 && name.elementsEqual("etag".utf8) {
            out.append(contentsOf: "ETag".utf8)
            return
        }
        if name.count == 16 && name.elementsEqual("www-authenticate".utf8) {
            out.append(contentsOf: "WWW-Authenticate".utf8)
            return
        }
        let webSocket = "sec-websocket-".utf8
        if name.count > webSocket.count && name.prefix(webSocket.count).elementsEqual(webSocket) {
            out.append(contentsOf: "Sec-WebSocket-".utf8)
            start = webSocket.count
        }
        var upper = true
        for index in start..<name.count {
            let byte = name[index]
            out.append(upper && byte >= lowercaseA && byte <= lowercaseZ ? byte &- 32 : byte)
            upper = byte == dash
        }
    }

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
