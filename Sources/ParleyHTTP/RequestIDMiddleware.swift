import Glibc
import ParleyNet
import ParleyObservability
import Synchronization

/// Gives every request an id: the client's `X-Request-Id` when it is short and plain, else a new one.
/// The id is echoed in the response and carried by the request's logger.
public struct RequestIDMiddleware: HTTPInlineMiddleware {
    /// 6 random hex digits per process run: with `-` and a counter of up to 8 hex digits an id stays within 15
    /// bytes, which Swift keeps inline in the `String` (no allocation per request) for the first 4 billion ids.
    private static let prefix: (UInt64, UInt64) = {
        var rng = SystemRandomNumberGenerator()
        var random = rng.next() as UInt64
        var bytes: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &bytes) { raw in
            let hex: StaticString = "0123456789abcdef"
            for index in 0..<6 {
                raw[index] = hex.utf8Start[Int(random & 0xF)]
                random >>= 4
            }
            raw[6] = UInt8(ascii: "-")
        }
        return bytes
    }()
    private static let counter = Atomic<UInt64>(0)

    public init() {}

    /// `<process prefix>-<counter in hex>`: unique per process run, cheap (one small string, no formatting).
    public static func generate() -> String {
        var n = counter.add(1, ordering: .relaxed).newValue
        var buffer: (UInt64, UInt64, UInt64) = (0, 0, 0)
        return withUnsafeMutableBytes(of: &buffer) { raw -> String in
            withUnsafeBytes(of: prefix) { prefix in
                for index in 0..<7 { raw[index] = prefix[index] }
            }
            let hex: StaticString = "0123456789abcdef"
            var digits = 0
            var probe = n
            repeat { digits += 1; probe >>= 4 } while probe != 0
            var index = 7 + digits
            let end = index
            repeat {
                index -= 1
                raw[index] = hex.utf8Start[Int(n & 0xF)]
                n >>= 4
            } while n != 0
            return String(decoding: UnsafeRawBufferPointer(rebasing: raw[0..<end]), as: UTF8.self)
        }
    }

    static func isAcceptable(_ id: String) -> Bool {
        id.utf8.count <= 64 && !id.isEmpty
            && id.utf8.allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A)
                    || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".")
            }
    }

    public func willHandle(_ request: HTTPRequest, _ context: inout RequestContext) {
        if let incoming = request.headers["x-request-id"], RequestIDMiddleware.isAcceptable(incoming) {
            context.requestID = incoming
        } else {
            context.requestID = RequestIDMiddleware.generate()
        }
    }

    public func didHandle(_ request: HTTPRequest, _ context: RequestContext, _ response: inout HTTPResponse) {
        response.headers.appendLowercased(name: "x-request-id", value: context.requestID)
    }
}
