import Glibc
import ParleyBytes
import ParleyObservability

/// Turns a response into wire bytes (RFC 9112 §4, §6). Pure apart from the date it is given.
public struct ResponseSerializer: Sendable {
    public init() {}

    public func serialize(
        _ response: HTTPResponse, requestMethod: HTTPMethod, requestVersion: HTTPVersion,
        keepAlive: Bool, date: [UInt8]
    ) -> [UInt8] {
        let capacity = serializedSizeBound(response, requestMethod: requestMethod, date: date)
        return [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            count = serialize(
                response, requestMethod: requestMethod, requestVersion: requestVersion,
                keepAlive: keepAlive, date: date, into: buffer.baseAddress!)
        }
    }

    /// An upper bound of the serialized size (head and, where sent, body), for `serialize(_:...:into:)`.
    public func serializedSizeBound(_ response: HTTPResponse, requestMethod: HTTPMethod, date: [UInt8]) -> Int {
        var capacity = Self.statusLine(response.status).count + date.count + 96 + response.staticHeaders.byteCount
        if Self.includesBody(response, requestMethod: requestMethod) { capacity += response.body.count }
        response.headers.fields.withUnsafeBufferPointer { fields in
            for index in fields.indices {
                capacity += fields[index].name.utf8.count + fields[index].value.utf8.count + 4
            }
        }
        return capacity
    }

    /// Writes the response into `base`, which holds at least `serializedSizeBound` bytes (one pass of plain
    /// stores: the connection serializes into its loop's scratch memory and sends from there); returns the count.
    public func serialize(
        _ response: HTTPResponse, requestMethod: HTTPMethod, requestVersion: HTTPVersion,
        keepAlive: Bool, date: [UInt8], into base: UnsafeMutablePointer<UInt8>
    ) -> Int {
        let status = response.status
        var out = HeadWriter(base: base)
        out.write(Self.statusLine(status))
        // Fields read in place: `for (name, value) in headers` copies (and retains) both strings of each.
        response.headers.fields.withUnsafeBufferPointer { fields in
            for index in fields.indices { out.writeField(name: fields[index].name, value: fields[index].value) }
        }
        out.write(response.staticHeaders.wireBytes)
        if status >= 200 && status != 204 && status != 304 {
            out.write("Content-Length: ")
            DecimalASCII.withDigits(of: response.file.map { Int($0.length) } ?? response.body.count) { out.write($0) }
            out.write("\r\n")
        }
        out.write("Date: ")
        out.write(date)
        out.write("\r\n")
        if status == 101 {
            out.write("Connection: Upgrade\r\n")
        } else if !keepAlive {
            out.write("Connection: close\r\n")
        } else if requestVersion == .http1_0 {
            out.write("Connection: keep-alive\r\n")
        }
        out.write("\r\n")
        if Self.includesBody(response, requestMethod: requestMethod) { out.write(response.body) }
        return out.count
    }

    /// RFC 9110 §6.4.1: no content for HEAD, 1xx, 204 and 304; a file body is sent on its own.
    @inline(__always)
    static func includesBody(_ response: HTTPResponse, requestMethod: HTTPMethod) -> Bool {
        let status = response.status
        return requestMethod != .HEAD && status >= 200 && status != 204 && status != 304 && response.file == nil
    }

    @inline(__always)
    static func statusLine(_ status: Int) -> [UInt8] {
        status >= 100 && status < 600
            ? statusLines[status] : Array("HTTP/1.1 \(status) \(HTTPStatusText.reason(status))\r\n".utf8)
    }

    /// Plain stores into a buffer sized beforehand (no capacity check per byte).
    struct HeadWriter {
        let base: UnsafeMutablePointer<UInt8>
        var count = 0

        init(base: UnsafeMutablePointer<UInt8>) {
            self.base = base
        }

        @inline(__always)
        mutating func write(_ byte: UInt8) {
            base[count] = byte
            count &+= 1
        }

        @inline(__always)
        mutating func write(_ bytes: UnsafeRawBufferPointer) {
            guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
            UnsafeMutableRawPointer(base + count).copyMemory(from: source, byteCount: bytes.count)
            count &+= bytes.count
        }

        mutating func write(_ bytes: [UInt8]) {
            bytes.withUnsafeBytes { write($0) }
        }

        mutating func write(_ literal: StaticString) {
            write(UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
        }

        /// A field line; the stored (lowercased) name goes out in its usual spelling (`content-type` ->
        /// `Content-Type`, `etag` -> `ETag`), converted while copied (no string, no lookup per header).
        mutating func writeField(name: String, value: String) {
            let written = ResponseSerializer.withUTF8(name) { bytes -> Bool in
                // Framing headers are the serializer's job, never the handler's (compared by length first).
                if ResponseSerializer.isFramingHeader(bytes) { return false }
                ResponseSerializer.writeCanonicalName(bytes, to: &self)
                return true
            }
            guard written else { return }
            write(UInt8(ascii: ":"))
            write(UInt8(ascii: " "))
            ResponseSerializer.withUTF8(value) { bytes in
                // Response splitting guard: CR and LF never reach the wire inside a value. Checked first, so the
                // usual value is copied in one piece.
                if bytes.allSatisfy({ $0 != 0x0D && $0 != 0x0A }) {
                    write(UnsafeRawBufferPointer(bytes))
                } else {
                    for byte in bytes where byte != 0x0D && byte != 0x0A { write(byte) }
                }
            }
            write(UInt8(ascii: "\r"))
            write(UInt8(ascii: "\n"))
        }
    }

    /// A string's UTF-8 without copying the string (`withUTF8` is mutating, so it needs a copy and a retain);
    /// a bridged string, which has no contiguous UTF-8, is copied.
    @inline(__always)
    static func withUTF8<R>(_ string: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = string.utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = string
        return copy.withUTF8(body)
    }

    /// `content-length`, `connection`, `transfer-encoding` or `date` (names are stored lowercased).
    static func isFramingHeader(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        switch name.count {
        case 4: name.elementsEqual("date".utf8)
        case 10: name.elementsEqual("connection".utf8)
        case 14: name.elementsEqual("content-length".utf8)
        case 17: name.elementsEqual("transfer-encoding".utf8)
        default: false
        }
    }

    /// Capitalises the first letter and each letter after `-`; the few registered names spelled otherwise
    /// (`ETag`, `WWW-Authenticate`, `Sec-WebSocket-*`) are special-cased.
    static func writeCanonicalName(_ name: UnsafeBufferPointer<UInt8>, to out: inout HeadWriter) {
        let lowercaseA = UInt8(ascii: "a"), lowercaseZ = UInt8(ascii: "z"), dash = UInt8(ascii: "-")
        var start = 0
        if name.count == 4 && name.elementsEqual("etag".utf8) {
            out.write("ETag")
            return
        }
        if name.count == 16 && name.elementsEqual("www-authenticate".utf8) {
            out.write("WWW-Authenticate")
            return
        }
        let webSocket = "sec-websocket-".utf8
        if name.count > webSocket.count && name.prefix(webSocket.count).elementsEqual(webSocket) {
            out.write("Sec-WebSocket-")
            start = webSocket.count
        }
        var upper = true
        for index in start..<name.count {
            let byte = name[index]
            out.write(upper && byte >= lowercaseA && byte <= lowercaseZ ? byte &- 32 : byte)
            upper = byte == dash
        }
    }

    /// `HTTP/1.1 200 OK\r\n` for every status, built once.
    private static let statusLines: [[UInt8]] = (0..<600).map {
        Array("HTTP/1.1 \($0) \(HTTPStatusText.reason($0))\r\n".utf8)
    }

    /// IMF-fixdate (RFC 9110 §5.6.7), e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
    public static func httpDate(_ seconds: time_t) -> String {
        var t = seconds
        var tm = tm()
        gmtime_r(&t, &tm)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func pad(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return
            "\(days[Int(tm.tm_wday)]), \(pad(tm.tm_mday)) \(months[Int(tm.tm_mon)]) \(tm.tm_year + 1900) \(pad(tm.tm_hour)):\(pad(tm.tm_min)):\(pad(tm.tm_sec)) GMT"
    }
}
