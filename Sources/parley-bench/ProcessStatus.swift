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
                return Int(
                    text.dropFirst(6).split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first ?? "")
            }
        }
        return nil
    }
}

extension ProcessStatus {
    /// CPU seconds this process used so far (user + system, all threads): the script subtracts it, with the
    /// servers' and PostgreSQL's, from the machine's busy time to show how much other work ran beside the run.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}
