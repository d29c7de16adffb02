import ParleyCrypto

/// AES-256-GCM at rest under the master key, the one way every stored secret is sealed (app secrets, push
/// credentials). During a master-key rotation (`PARLEY_PREVIOUS_MASTER_KEY`) what the previous key sealed still
/// opens, and `parley rotate-master-key` reseals it under the current one.
public struct MasterKeySealer: Sendable {
    public let current: MasterKey
    public let previous: MasterKey?

    public init(current: MasterKey, previous: MasterKey? = nil) {
        self.current = current
        self.previous = previous
    }

    public func seal(_ plaintext: [UInt8], associatedData: [UInt8]) throws(CryptoError) -> [UInt8] {
        try AESGCM.seal(plaintext: plaintext, key: current.bytes, associatedData: associatedData)
    }

    /// The plaintext, or nil when the bytes are authentic under neither key (wrong key, tampered or moved row).
    public func open(_ sealed: [UInt8], associatedData: [UInt8]) -> [UInt8]? {
        if let plain = try? AESGCM.open(sealed, key: current.bytes, associatedData: associatedData) { return plain }
        guard let previous else { return nil }
        return try? AESGCM.open(sealed, key: previous.bytes, associatedData: associatedData)
    }

    public enum Reseal: Sendable, Equatable {
        /// Already sealed under the current key.
        case current
        /// Sealed under the previous key: these bytes hold the same plaintext under the current one.
        case resealed([UInt8])
        /// Authentic under neither key.
        case unreadable
    }

    public func reseal(_ sealed: [UInt8], associatedData: [UInt8]) -> Reseal {
        if (try? AESGCM.open(sealed, key: current.bytes, associatedData: associatedData)) != nil { return .current }
        guard let previous, let plain = try? AESGCM.open(sealed, key: previous.bytes, associatedData: associatedData),
            let resealed = try? seal(plain, associatedData: associatedData)
        else { return .unreadable }
        return .resealed(resealed)
    }
}
