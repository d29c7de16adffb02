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

    /// The app id of a well-formed key; nil for anything else.
    public static func appId(of key: String) -> Int64? {
        let parts = key.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard parts.count == 4, (1...19).contains(parts[0].count), parts[0].allSatisfy(isDigit),
              parts[0].first != UInt8(ascii: "0"),
              parts[1].count == 4, parts[1].allSatisfy(isDigit),
              parts[2].count == 2, parts[2].allSatisfy(isDigit),
              parts[3].count == randomLength, parts[3].allSatisfy(isBase64URL) else { return nil }
        return Int64(String(decoding: parts[0], as: UTF8.self))
    }

    public static func isValid(_ key: String) -> Bool { appId(of: key) != nil }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"): true
        default: false
        }
    }
}
