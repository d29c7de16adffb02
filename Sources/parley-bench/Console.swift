import Glibc

/// Output of the benchmark: results as `key=value` lines on stdout (scripts/bench-realtime parses them), progress
/// and errors on stderr. Written with `write(2)` so that nothing waits in a stdio buffer when the process exits,
/// and because Swift 6 rejects Glibc's global `stdout`/`stderr`.
enum Console {
    /// One progress line on stderr.
    static func log(_ message: String) {
        write(2, "[parley-bench] " + message + "\n")
    }

    /// One result line on stdout.
    static func result(_ key: String, _ value: String) {
        write(1, key + "=" + value + "\n")
    }

    static func result(_ key: String, _ value: Int) { result(key, String(value)) }

    static func result(_ key: String, _ value: Double, decimals: Int = 2) {
        result(key, format(value, decimals: decimals))
    }

    /// `value` with a fixed number of decimals (no Foundation).
    static func format(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return "nan" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let whole = Int(scaled / scale)
        var text = (value < 0 && scaled > 0 ? "-" : "") + String(whole)
        if decimals > 0 {
            let fraction = String(Int(scaled) - whole * Int(scale))
            text += "." + String(repeating: "0", count: decimals - fraction.count) + fraction
        }
        return text
    }

    private static func write(_ fd: Int32, _ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                offset += n
            }
        }
    }
}
