import Foundation
import ParleyCrypto

/// Object keys are the server's names for uploaded files: `<appId>/<yyyy>/<mm>/<22 random base64url chars>`
/// (132 random bits). Never derived from the client's file name, so they cannot be guessed, and checked
/// against this exact shape before any lookup, so `../`, `%2F`, NUL bytes and the like never reach storage.
public enum ObjectKey {
    static let randomLength = 22

    public static func generate(appId: Int64, now: Date = Date()) -> String {
        var seconds = time_t(now.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let year = Int(parts.tm_year) + 1900
        let month = Int(parts.tm_mon) + 1
        let random = String(Base64URL.encode(SecureRandom.bytes(17)).prefix(randomLength))
        return "\(appId)/\(year)/\(month < 10 ? "0" : "")\(month)/\(random)"
    }

    /// The app id of a well-formed key; nil for anything else. One pass over the bytes, no allocation (every
    /// signed download checks it).
    public static func appId(of key: String) -> Int64? {
        var key = key
        return key.withUTF8 { bytes -> Int64? in
            // <appId: 1-19 digits, no leading 0> / <4 digits> / <2 digits> / <22 base64url>
            guard bytes.count >= 1 + 1 + 4 + 1 + 2 + 1 + randomLength,
                bytes.count <= 19 + 1 + 4 + 1 + 2 + 1 + randomLength
            else {
                return nil
            }
            var index = 0
            var appId: Int64 = 0
            while index < bytes.count, isDigit(bytes[index]) {
                guard index < 19 else { return nil }
                let (product, overflow) = appId.multipliedReportingOverflow(by: 10)
                guard !overflow else { return nil }
                appId = product + Int64(bytes[index] - 0x30)
                index += 1
            }
            guard index >= 1, bytes[0] != UInt8(ascii: "0"), bytes.count - index == 1 + 4 + 1 + 2 + 1 + randomLength,
                bytes[index] == UInt8(ascii: "/"),
                (index + 1...index + 4).allSatisfy({ isDigit(bytes[$0]) }), bytes[index + 5] == UInt8(ascii: "/"),
                isDigit(bytes[index + 6]), isDigit(bytes[index + 7]), bytes[index + 8] == UInt8(ascii: "/")
            else {
                return nil
            }
            for position in (index + 9)..<bytes.count where !isBase64URL(bytes[position]) { return nil }
            return appId
        }
    }

    public static func isValid(_ key: String) -> Bool { appId(of: key) != nil }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }
}
