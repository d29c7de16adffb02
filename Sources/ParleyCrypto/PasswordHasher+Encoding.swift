extension PasswordHasher {
    /// A parsed `$scrypt$ln=<n>,r=<n>,p=<n>$<salt>$<hash>` string.
    struct EncodedHash {
        let parameters: Parameters
        let salt: [UInt8]
        let hash: [UInt8]

        /// Accepted salt lengths for stored hashes, in bytes.
        static let saltRange = 8...64
        /// Accepted hash lengths for stored hashes, in bytes; shorter hashes are too weak to trust.
        static let hashRange = 16...64

        init(parameters: Parameters, salt: [UInt8], hash: [UInt8]) {
            self.parameters = parameters
            self.salt = salt
            self.hash = hash
        }

        /// Parses strictly; returns `nil` for anything but the exact format with parameters
        /// inside the limits.
        init?(parsing encoded: String) {
            let fields = encoded.split(separator: "$", omittingEmptySubsequences: false)
            guard fields.count == 5, fields[0].isEmpty, fields[1] == "scrypt",
                let parameters = Self.parseParameters(fields[2]),
                let salt = Base64.decode(String(fields[3])), Self.saltRange.contains(salt.count),
                let hash = Base64.decode(String(fields[4])), Self.hashRange.contains(hash.count)
            else { return nil }
            self.init(parameters: parameters, salt: salt, hash: hash)
        }

        var encoded: String {
            "$scrypt$\(parameters)$\(Base64.encode(salt, padding: false))$\(Base64.encode(hash, padding: false))"
        }

        /// Parses `ln=<n>,r=<n>,p=<n>`, in that order, with canonical decimal numbers.
        private static func parseParameters(_ field: Substring) -> Parameters? {
            let pairs = field.split(separator: ",", omittingEmptySubsequences: false)
            guard pairs.count == 3,
                let logN = value(pairs[0], key: "ln"),
                let r = value(pairs[1], key: "r"),
                let p = value(pairs[2], key: "p")
            else { return nil }
            return try? Parameters(logN: logN, r: r, p: p)
        }

        /// The number after `key=`: 1 to 4 ASCII digits, no sign, no leading zero.
        private static func value(_ pair: Substring, key: String) -> Int? {
            let parts = pair.split(separator: "=", omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == key else { return nil }
            let digits = parts[1].utf8
            guard (1...4).contains(digits.count),
                digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                digits.first != UInt8(ascii: "0")
            else { return nil }
            return Int(parts[1])
        }
    }
}
