import ParleyBytes
import ParleyCrypto
import ParleyNet

/// Signs and checks download URLs: `sig = base64url(HMAC-SHA256(appKey, "GET\n<objectKey>\n<exp>\n<d>"))`, where
/// the per-app key is derived from the server's secret and the app id taken from the object key, and `d` is the
/// disposition the URL grants (`i` inline, `a` attachment). A signature made for one app never verifies for
/// another app's key, and changing the key, the expiry or the disposition breaks it. URLs signed before the
/// disposition was (no `d`, the MAC over `GET\n<objectKey>\n<exp>`) still verify, as attachments.
public final class FileURLSigner: Sendable {
    private let secret: [UInt8]
    /// Per-app keys, derived once per event loop (a download verifies one signature; deriving costs another HMAC),
    /// so the loops never share a lock or a dictionary on the way.
    private let appKeys = LoopLocal { AppKeys() }

    private final class AppKeys {
        var keys: [Int64: HMACKey] = [:]
        /// The MAC last computed for each object key, with the expiry and disposition it covers. The MAC is a
        /// function of public inputs (key, expiry, disposition, app), so remembering it leaks nothing: a hot URL is
        /// then checked with one lookup and the same constant-time comparison, not an HMAC per request.
        var macs: [String: (expiresAt: Int64, disposition: UInt8, mac: [UInt8])] = [:]
    }

    /// `secret`: the server-wide signing secret (derived from the master key at start-up).
    public init(secret: [UInt8]) {
        self.secret = HMAC.sha256(key: secret, message: Array("parley-files-url-v1".utf8))
    }

    /// `valid` carries the disposition the URL grants: `attachment` for URLs signed without one.
    public enum Verdict: Sendable, Equatable { case valid(ContentDisposition.Kind), expired, invalid }

    /// `disposition` nil signs the form without `d` (URLs issued before the disposition was signed).
    public func signature(
        objectKey: String, expiresAt: Int64, appId: Int64, disposition: ContentDisposition.Kind?
    ) -> String {
        withMAC(objectKey: objectKey, expiresAt: expiresAt, disposition: disposition.map(Self.letter), appId: appId) {
            Base64URL.encode($0)
        }
    }

    /// The query string for a download: `exp=...&d=...&sig=...`.
    public func query(
        objectKey: String, expiresAt: Int64, appId: Int64, disposition: ContentDisposition.Kind
    ) -> String {
        let sig = signature(objectKey: objectKey, expiresAt: expiresAt, appId: appId, disposition: disposition)
        return "exp=\(expiresAt)&d=\(String(Unicode.Scalar(Self.letter(disposition))))&sig=\(sig)"
    }

    public func verify(
        objectKey: String, expiresAt: String?, disposition: String?, signature: String?, now: Int64
    ) -> Verdict {
        verify(
            objectKey: objectKey, expiresAt: expiresAt.map { Substring($0) },
            disposition: disposition.map { Substring($0) }, signature: signature.map { Substring($0) }, now: now)
    }

    /// Checks the signature first (in constant time), then the expiry: a tampered expiry or disposition is
    /// `invalid`. The expiry must be canonical decimal (no sign, no leading zero), the disposition absent, `a` or
    /// `i`, the signature unpadded base64url of 32 bytes. Nothing is allocated on the way, and a URL checked before
    /// on this loop costs no HMAC: every download runs this.
    public func verify(
        objectKey: String, expiresAt: Substring?, disposition: Substring?, signature: Substring?, now: Int64
    ) -> Verdict {
        guard let appId = ObjectKey.appId(of: objectKey), var expiresAt, var signature,
            let exp = expiresAt.withUTF8({ Self.canonicalDecimal($0) })
        else { return .invalid }
        // 0: no `d` (the older form, an attachment).
        var letter: UInt8 = 0
        if let disposition {
            guard disposition.utf8.count == 1, let only = disposition.utf8.first,
                only == Self.letter(.inline) || only == Self.letter(.attachment)
            else { return .invalid }
            letter = only
        }
        let matches = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: SHA256.byteCount) { given in
            guard
                signature.withUTF8({
                    Base64URL.decodeUnpadded(UnsafeRawBufferPointer($0), into: UnsafeMutableRawBufferPointer(given))
                })
            else { return false }
            let cache = appKeys.value
            if let memo = cache.macs[objectKey], memo.expiresAt == exp, memo.disposition == letter {
                return memo.mac.withUnsafeBytes { ConstantTime.equals(UnsafeRawBufferPointer(given), $0) }
            }
            return withMAC(objectKey: objectKey, expiresAt: exp, disposition: letter == 0 ? nil : letter, appId: appId)
            { expected in
                if cache.macs.count >= 10_000 { cache.macs.removeAll(keepingCapacity: true) }
                cache.macs[objectKey] = (exp, letter, Array(expected))
                return ConstantTime.equals(UnsafeRawBufferPointer(given), expected)
            }
        }
        guard matches else { return .invalid }
        return exp > now ? .valid(letter == Self.letter(.inline) ? .inline : .attachment) : .expired
    }

    /// The `d` parameter of a disposition.
    private static func letter(_ disposition: ContentDisposition.Kind) -> UInt8 {
        switch disposition {
        case .inline: UInt8(ascii: "i")
        case .attachment: UInt8(ascii: "a")
        }
    }

    /// A positive decimal without sign or leading zero that fits an Int64; nil otherwise.
    private static func canonicalDecimal(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard !bytes.isEmpty, bytes.count <= 19, bytes[0] != UInt8(ascii: "0") else { return nil }
        var value: Int64 = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (product, overflow) = value.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            let (sum, overflowed) = product.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflowed else { return nil }
            value = sum
        }
        return value
    }

    /// Runs `body` with the MAC of `GET\n<objectKey>\n<exp>` (then `\n<d>` when there is a disposition letter) under
    /// the app's key, computed on the stack.
    private func withMAC<R>(
        objectKey: String, expiresAt: Int64, disposition: UInt8?, appId: Int64,
        _ body: (UnsafeRawBufferPointer) -> R
    ) -> R {
        let cache = appKeys.value
        let appKey: HMACKey
        if let key = cache.keys[appId] {
            appKey = key
        } else {
            appKey = HMACKey(HMAC.sha256(key: secret, message: Array("app:\(appId)".utf8)))
            if cache.keys.count >= 100_000 { cache.keys.removeAll() }
            cache.keys[appId] = appKey
        }
        var key = objectKey
        return key.withUTF8 { keyBytes in
            // "GET\n" + key + "\n" + up to 20 digits and a sign + "\n" + the disposition letter.
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: keyBytes.count + 28) { message in
                var count = 0
                for byte in "GET\n".utf8 { message[count] = byte; count += 1 }
                for byte in keyBytes { message[count] = byte; count += 1 }
                message[count] = UInt8(ascii: "\n")
                count += 1
                DecimalASCII.withDigits(of: Int(expiresAt)) { digits in
                    for byte in digits { message[count] = byte; count += 1 }
                }
                if let disposition {
                    message[count] = UInt8(ascii: "\n")
                    message[count + 1] = disposition
                    count += 2
                }
                return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: SHA256.byteCount) { digest in
                    appKey.authenticate(
                        UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: message[0..<count])),
                        into: UnsafeMutableRawBufferPointer(digest))
                    return body(UnsafeRawBufferPointer(digest))
                }
            }
        }
    }
}
