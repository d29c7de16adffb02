extension PasswordHasher {
    /// scrypt cost parameters: N = 2^logN, block size r, parallelism p.
    public struct Parameters: Sendable, Hashable, CustomStringConvertible {
        /// log2 of the CPU/memory cost N (the PHC string's `ln`).
        public let logN: Int
        /// Block size; memory and time grow linearly with it.
        public let r: Int
        /// Parallelism; OpenSSL computes the p lanes one after another, so time grows with it.
        public let p: Int

        /// N = 2^logN.
        public var n: Int { 1 << logN }

        /// Approximate memory one hash needs, in bytes.
        public var memoryByteCount: Int { Self.memoryByteCount(n: n, r: r, p: p) }

        /// Validated parameters.
        ///
        /// - Throws: `CryptoError.invalidParameters` outside the limits documented on the
        ///   static `max*` constants.
        public init(logN: Int, r: Int, p: Int) throws(CryptoError) {
            guard (1...Self.maxLogN).contains(logN) else {
                throw .invalidParameters("ln must be 1...\(Self.maxLogN)")
            }
            try Self.validate(n: 1 << logN, r: r, p: p)
            self.init(unchecked: logN, r: r, p: p)
        }

        private init(unchecked logN: Int, r: Int, p: Int) {
            self.logN = logN
            self.r = r
            self.p = p
        }

        /// Production parameters: N = 2^15, r = 8, p = 1.
        ///
        /// The figure Go's `x/crypto/scrypt` documents for interactive logins (as of 2017), one
        /// step above the scrypt paper's 2^14 for logins: about 32 MiB and 0.1-0.15 s of one
        /// core per hash. OWASP's cheat sheet asks for more (2^17, i.e.
        /// 128 MiB); on a small 2-core server that would cap concurrent logins far lower, so
        /// this trades some offline-guessing cost for login capacity. Raising it later is safe:
        /// stored hashes carry their own parameters and `needsRehash` flags the old ones.
        public static let `default` = Parameters(unchecked: 15, r: 8, p: 1)

        /// Cheap parameters (N = 2^10, about 1 MiB) for tests only. Never use in production.
        public static let testing = Parameters(unchecked: 10, r: 8, p: 1)

        public var description: String { "ln=\(logN),r=\(r),p=\(p)" }

        // MARK: Limits

        // The limits keep a corrupted or hostile stored hash from exhausting the server: without
        // them `$scrypt$ln=30,...` would ask for 128 GiB. They leave generous room above
        // `.default` for raising the cost later.

        /// Largest accepted log2(N).
        public static let maxLogN = 20
        /// Largest accepted r.
        public static let maxR = 32
        /// Largest accepted p.
        public static let maxP = 16
        /// Largest accepted memory per hash: 256 MiB, 8x the default.
        public static let maxMemoryByteCount = 256 * 1024 * 1024
        /// Largest accepted work N*r*p (in 128-byte block mixes): 2^22, 16x the default's 2^18,
        /// a couple of seconds of one core.
        public static let maxWork = 1 << 22
        /// Largest derived key scryptRaw produces.
        static let maxOutputByteCount = 1024
        /// Extra room on top of OpenSSL's own memory estimate when setting `maxmem`.
        static let memorySlack = 1024 * 1024

        /// OpenSSL's estimate of scrypt's memory: V is 128*r*(N+2) bytes, B is 128*r*p.
        /// Callers validate first, so the values are small enough not to overflow.
        static func memoryByteCount(n: Int, r: Int, p: Int) -> Int {
            128 * r * (n + 2) + 128 * r * p
        }

        /// Checks raw scrypt parameters against the limits, in an order that cannot overflow.
        static func validate(n: Int, r: Int, p: Int) throws(CryptoError) {
            // RFC 7914 section 2: N must be a power of two greater than 1.
            guard n > 1, n <= 1 << maxLogN, n & (n - 1) == 0 else {
                throw .invalidParameters("N must be a power of two in 2...2^\(maxLogN)")
            }
            guard (1...maxR).contains(r) else { throw .invalidParameters("r must be 1...\(maxR)") }
            guard (1...maxP).contains(p) else { throw .invalidParameters("p must be 1...\(maxP)") }
            guard memoryByteCount(n: n, r: r, p: p) <= maxMemoryByteCount else {
                throw .invalidParameters("needs more than \(maxMemoryByteCount >> 20) MiB")
            }
            guard n * r * p <= maxWork else { throw .invalidParameters("N*r*p exceeds \(maxWork)") }
        }
    }
}
