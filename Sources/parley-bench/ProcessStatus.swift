import Glibc

/// Figures from `/proc/PID/status`.
enum ProcessStatus {
    /// Resident memory in KiB (`VmRSS`); nil when the process or the line is not there.
    static func residentKiB(pid: String = "self") -> Int? {
        guard let file = fopen("/proc/\(pid)/status", "r") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if text.hasPrefix("VmRSS:") {
                return Int(text.dropFirst(6).split(separator: " ").first ?? "")
            }
        }
        return nil
    }
}
