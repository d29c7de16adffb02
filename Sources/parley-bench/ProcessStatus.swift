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

extension ProcessStatus {
    /// CPU seconds another process used so far (user + system, all threads: fields 14 and 15 of
    /// `/proc/PID/stat`); nil when it is not there.
    static func cpuSeconds(pid: Int32) -> Double? {
        guard let file = fopen("/proc/\(pid)/stat", "r") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 1024)
        guard fgets(&line, Int32(line.count), file) != nil else { return nil }
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // The command name (field 2) may hold spaces: count from the last ')'.
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
