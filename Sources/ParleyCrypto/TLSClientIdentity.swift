import COpenSSL
import Glibc
import Synchronization

/// A TLS client certificate with its private key, as PEM: what a PKCS #12 file (.p12, as Keychain Access exports an
/// APNs certificate) holds, in the form libcurl takes from memory.
public struct TLSClientIdentity: Sendable, Equatable {
    /// The certificate first, then the CA certificates that came with it (PEM blocks).
    public var certificatePEM: String
    /// The private key, unencrypted PKCS #8 PEM: keep it sealed at rest.
    public var privateKeyPEM: String
    /// The certificate subject's common name (Apple's: "Apple Push Services: <bundle id>").
    public var commonName: String?
    /// The certificate's expiry (seconds since 1970).
    public var notAfter: Int?

    /// The certificate blocks then the key block: one text to seal (`init(pem:)` reads it back).
    public var pem: String { certificatePEM + privateKeyPEM }

    /// Reads the blocks `pem` wrote back: blocks of a private key are the key, the others the certificates.
    public init(pem: String) throws(CryptoError) {
        var certificates = ""
        var key = ""
        var block = ""
        var inBlock = false
        for line in pem.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            if line.hasPrefix("-----BEGIN ") { inBlock = true }
            guard inBlock else { continue }
            block += line + "\n"
            guard line.hasPrefix("-----END ") else { continue }
            if line.hasSuffix("PRIVATE KEY-----") { key += block } else { certificates += block }
            block = ""
            inBlock = false
        }
        guard !certificates.isEmpty, !key.isEmpty else {
            throw .invalidKeyFormat("not a certificate and private key in PEM")
        }
        self.init(certificatePEM: certificates, privateKeyPEM: key, commonName: nil, notAfter: nil)
    }

    public init(certificatePEM: String, privateKeyPEM: String, commonName: String?, notAfter: Int?) {
        self.certificatePEM = certificatePEM
        self.privateKeyPEM = privateKeyPEM
        self.commonName = commonName
        self.notAfter = notAfter
    }

    /// The identity in a PKCS #12 file (DER). `password` nil tries no password and the empty one (exporters differ).
    /// Files encrypted with the ciphers of older exporters (RC2, 3DES: Keychain Access, `openssl pkcs12 -legacy`)
    /// need OpenSSL's legacy provider, loaded on the first such file.
    public static func pkcs12(_ der: [UInt8], password: String?) throws(CryptoError) -> TLSClientIdentity {
        guard !der.isEmpty, der.count < 1 << 20 else { throw .invalidKeyFormat("not a PKCS #12 file") }
        if let identity = parse(der, password: password) { return identity }
        if LegacyProvider.load(), let identity = parse(der, password: password) { return identity }
        throw .invalidKeyFormat("not a PKCS #12 file with a certificate and its key, or the wrong password")
    }

    private static func parse(_ der: [UInt8], password: String?) -> TLSClientIdentity? {
        defer { ERR_clear_error() } // failed attempts leave errors that later unrelated calls must not see
        let p12: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PKCS12(nil, &cursor, buffer.count)
        }
        guard let p12 else { return nil }
        defer { PKCS12_free(p12) }
        for candidate in password.map({ [$0] }) ?? [nil, ""] {
            var key: OpaquePointer?
            var certificate: OpaquePointer?
            var chain: OpaquePointer?
            guard PKCS12_parse(p12, candidate, &key, &certificate, &chain) == 1 else { continue }
            defer {
                EVP_PKEY_free(key)
                X509_free(certificate)
                if let chain {
                    for index in 0..<OPENSSL_sk_num(chain) {
                        X509_free(OpaquePointer(OPENSSL_sk_value(chain, index)))
                    }
                    OPENSSL_sk_free(chain)
                }
            }
            guard let key, let certificate, X509_check_private_key(certificate, key) == 1 else { return nil }
            var certificates = pem { PEM_write_bio_X509($0, certificate) }
            if let chain {
                for index in 0..<OPENSSL_sk_num(chain) {
                    let extra = OpaquePointer(OPENSSL_sk_value(chain, index))
                    certificates += pem { PEM_write_bio_X509($0, extra) }
                }
            }
            let keyPEM = pem { PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) }
            guard !certificates.isEmpty, !keyPEM.isEmpty else { return nil }
            return TLSClientIdentity(
                certificatePEM: certificates, privateKeyPEM: keyPEM, commonName: commonName(certificate),
                notAfter: notAfter(certificate))
        }
        return nil
    }

    private static func commonName(_ certificate: OpaquePointer) -> String? {
        guard let name = X509_get_subject_name(certificate) else { return nil }
        var buffer = [CChar](repeating: 0, count: 256)
        let length = X509_NAME_get_text_by_NID(name, NID_commonName, &buffer, Int32(buffer.count))
        guard length > 0 else { return nil }
        return String(decoding: buffer[..<Int(length)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func notAfter(_ certificate: OpaquePointer) -> Int? {
        guard let time = X509_get0_notAfter(certificate) else { return nil }
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
        return timegm(&parts)
    }

    /// The PEM `write` puts into a memory BIO ("" when it fails).
    private static func pem(_ write: (OpaquePointer) -> Int32) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { return "" }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = BIO_read(bio, &chunk, Int32(chunk.count))
            if n <= 0 { break }
            out += chunk[..<Int(n)]
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// OpenSSL's legacy provider (RC2 and friends), loaded into the default library context at most once. Loading a
/// provider by hand stops OpenSSL from loading the default one implicitly, so the default is loaded too.
private enum LegacyProvider {
    private static let loaded = Mutex<Bool?>(nil)

    static func load() -> Bool {
        loaded.withLock { state in
            if let state { return state }
            let ok = OSSL_PROVIDER_load(nil, "default") != nil && OSSL_PROVIDER_load(nil, "legacy") != nil
            ERR_clear_error()
            state = ok
            return ok
        }
    }
}
