import Glibc

/// `parley-bench presence`: `count` users online, each watching `subscriptions` others (its neighbours on a ring:
/// the `subscriptions / 2` before and after it, whom scripts/bench-presence makes its friends between the `ready`
/// and `go` steps), then each user changes status (`away` / `online`) once per `period` seconds, spread evenly.
/// The server's CPU time (`/proc/PID/stat` of `--server-pid`) is read over `baseline` seconds with every
/// connection open and subscribed but nothing changing, then over `duration` seconds of changes: the difference
/// is what presence costs.
enum PresenceMode {
    static let optionNames = CommonOptions.names.union([
        "count", "subscriptions", "period", "baseline", "duration", "server-pid", "barrier-dir", "timeout",
    ])

    static func run(_ arguments: ArraySlice<String>) throws(BenchError) -> Bool {
        let options = try BenchOptions(arguments, allowed: optionNames)
        let common = try CommonOptions(options, defaultConcurrency: 256)
        let count = try options.int("count", 10_000, in: 3...19_000)
        let subscriptions = try options.int("subscriptions", 200, in: 2...1000)
        let period = try options.double("period", 60, in: 1...3600)
        let baseline = try options.double("baseline", 30, in: 1...3600)
        let duration = try options.double("duration", 60, in: 1...3600)
        let timeout = try options.double("timeout", 900, in: 10...7200)
        guard let serverPid = Int32(try options.string("server-pid")),
            ProcessStatus.cpuSeconds(pid: serverPid) != nil
        else { throw BenchError("--server-pid: not a running process") }
        guard subscriptions % 2 == 0, subscriptions < count else {
            throw BenchError("--subscriptions must be even and below --count")
        }
        let barrier = Barrier(directory: try? options.string("barrier-dir"), name: "presence")

        let userIds = (0..<count).map { "\(common.runId)-p\($0)" }
        let tokens = try common.accounts.imTokens(for: userIds, workers: common.loginWorkers)
        barrier.announce("ready")
        try barrier.wait(for: "go", timeout: timeout)

        let fleet = try Fleet(loops: common.loops)
        try fleet.open(tokens: tokens, to: common.server, maxInFlight: common.connectConcurrency, timeout: timeout)
        let counters = fleet.counters

        // Every connection subscribes to its ring neighbours; the acks list who it may see (all of them).
        let half = subscriptions / 2
        let subscribeStarted = MonotonicClock.now()
        for context in fleet.contexts {
            context.loop.execute {
                context.sendToEach(maxInFlight: 16) { index in
                    let me = Int(index)
                    let ids = (1...half).flatMap { offset in
                        [userIds[(me + offset) % count], userIds[(me - offset + count) % count]]
                    }
                    return Array(
                        (#"{"type":"presence_subscribe","data":{"userIds":["#
                            + ids.map { "\"\($0)\"" }.joined(separator: ",") + "]}}").utf8)
                }
            }
        }
        let subscribed = fleet.wait(timeout: timeout) {
            counters.appPingAcks.value + counters.appRequestErrors.value >= count
        }
        let subscribeSeconds = MonotonicClock.seconds(since: subscribeStarted)
        guard subscribed, counters.appRequestErrors.value == 0 else {
            fleet.close(timeout: 30)
            fleet.shutdown()
            throw BenchError(
                "\(counters.appPingAcks.value) of \(count) subscriptions acknowledged: \(counters.reasonSummary)")
        }
        Console.log(
            "\(count) connections subscribed to \(subscriptions) users each in "
                + "\(Console.format(subscribeSeconds, decimals: 1)) s")
        // The acks' own presence frames (the subscribers coming online) settle before the baseline.
        usleep(3_000_000)

        let baselineCPU = try measure(serverPid, seconds: baseline)
        let framesBefore = counters.presenceFrames.value
        let entriesBefore = counters.presenceEntries.value
        let acksBefore = counters.appPingAcks.value
        let start = MonotonicClock.now() + 100_000_000
        let end = start + Int64(duration * 1e9)
        for context in fleet.contexts {
            context.loop.execute {
                context.startPresenceChanges(period: Int64(period * 1e9), start: start, end: end)
            }
        }
        let cpuStart = ProcessStatus.cpuSeconds(pid: serverPid) ?? 0
        let wallStart = MonotonicClock.now()
        while MonotonicClock.now() < end { usleep(50_000) }
        let cpuEnd = ProcessStatus.cpuSeconds(pid: serverPid) ?? 0
        let seconds = MonotonicClock.seconds(since: wallStart)
        let changesCPU = (cpuEnd - cpuStart) / seconds
        // The last window's events.
        usleep(2_000_000)
        let changes = counters.sent.value
        let acked = counters.appPingAcks.value - acksBefore
        let frames = counters.presenceFrames.value - framesBefore
        let entries = counters.presenceEntries.value - entriesBefore
        let unexpected = counters.unexpectedEnds.value
        let reasons = counters.reasonSummary
        fleet.close(timeout: 60)
        fleet.shutdown()

        Console.result("mode", "presence")
        Console.result("connections", count)
        Console.result("subscriptions_each", subscriptions)
        Console.result("subscribe_s", subscribeSeconds, decimals: 1)
        Console.result("period_s", period, decimals: 0)
        Console.result("duration_s", seconds, decimals: 1)
        Console.result("changes", changes)
        Console.result("changes_acked", acked)
        Console.result("changes_per_s", Double(changes) / seconds, decimals: 1)
        Console.result("presence_frames", frames)
        Console.result("presence_entries", entries)
        Console.result("entries_per_s", Double(entries) / seconds, decimals: 0)
        Console.result("frames_per_s", Double(frames) / seconds, decimals: 0)
        Console.result("server_cpu_pct_idle", baselineCPU * 100, decimals: 1)
        Console.result("server_cpu_pct_changes", changesCPU * 100, decimals: 1)
        Console.result("server_cpu_pct_presence", (changesCPU - baselineCPU) * 100, decimals: 1)
        Console.result("cpu_s", ProcessStatus.cpuSeconds(), decimals: 2)
        if !reasons.isEmpty { Console.result("notes", reasons) }

        var failures: [String] = []
        if unexpected > 0 { failures.append("\(unexpected) connections closed during the run: \(reasons)") }
        if acked < changes { failures.append("only \(acked) of \(changes) presence_set acknowledged") }
        // Each change reaches every subscriber of the user (coalescing may merge a user's two changes within one
        // window, never drop the last one): most of changes x subscriptions entries arrive.
        if entries < changes * subscriptions * 9 / 10 {
            failures.append("\(entries) entries for \(changes) changes x \(subscriptions) subscribers")
        }
        return Report.verdict(failures)
    }

    /// The server's CPU use (cores) over `seconds`.
    private static func measure(_ pid: Int32, seconds: Double) throws(BenchError) -> Double {
        guard let before = ProcessStatus.cpuSeconds(pid: pid) else { throw BenchError("the server is gone") }
        let started = MonotonicClock.now()
        while MonotonicClock.seconds(since: started) < seconds { usleep(50_000) }
        guard let after = ProcessStatus.cpuSeconds(pid: pid) else { throw BenchError("the server is gone") }
        return (after - before) / MonotonicClock.seconds(since: started)
    }
}
