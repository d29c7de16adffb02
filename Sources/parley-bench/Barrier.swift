import Glibc

/// Steps shared with scripts/bench-realtime through empty files in one directory: idle mode announces
/// `NAME.ready` (logged in, nothing open), waits for `go`, announces `NAME.held` (every connection open and held
/// through the heartbeats), waits for `release`. Between those steps the script reads the servers' resident
/// memory, so the figure covers the connections and nothing else. Without a directory the steps are skipped.
struct Barrier {
    let directory: String?
    let name: String

    func announce(_ step: String) {
        guard let directory else { return }
        let fd = open("\(directory)/\(name).\(step)", O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
        if fd >= 0 { close(fd) }
    }

    /// Waits for the script's file `step`; fails after `timeout` seconds.
    func wait(for step: String, timeout: Double) throws(BenchError) {
        guard let directory else { return }
        let deadline = MonotonicClock.now() + Int64(timeout * 1e9)
        while access("\(directory)/\(step)", F_OK) != 0 {
            if MonotonicClock.now() >= deadline {
                throw BenchError("waited \(Int(timeout)) s for \(directory)/\(step) from the script")
            }
            usleep(50_000)
        }
    }
}
