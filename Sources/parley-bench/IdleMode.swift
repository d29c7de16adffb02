import Glibc

/// `parley-bench idle`: `count` WebSockets of as many users, opened and then left alone for `hold` seconds while
/// the server's heartbeat pings them and they answer with pongs. Checks that none was closed, that each saw at
/// least `min-pings` pings, and that each still answers an application `ping` request afterwards.
///
/// The server's memory is read by scripts/bench-realtime between the `Barrier` steps. One process holds at most
/// `count` connections: the hard limit on open files here is 20,000 per process, so 20,000 connections take
/// two processes (and two server instances).
enum IdleMode {
    static let optionNames = CommonOptions.names.union(["count", "hold", "min-pings", "barrier-dir", "name", "timeout"])

    static func run(_ arguments: ArraySlice<String>) throws(BenchError) -> Bool {
        let options = try BenchOptions(arguments, allowed: optionNames)
        let common = try CommonOptions(options, defaultConcurrency: 256)
        let count = try options.int("count", 10_000, in: 1...19_000)
        let hold = try options.double("hold", 20, in: 0...3600)
        let minPings = try options.int("min-pings", 1, in: 0...1000)
        let timeout = try options.double("timeout", 600, in: 10...7200)
        let barrier = Barrier(directory: try? options.string("barrier-dir"), name: try options.string("name", "idle"))

        let clientStart = ProcessStatus.residentKiB() ?? 0
        let userIds = (0..<count).map { "\(common.runId)-i\($0)" }
        let tokens = try common.accounts.imTokens(for: userIds, workers: common.loginWorkers)

        barrier.announce("ready")
        try barrier.wait(for: "go", timeout: timeout)
        let fleet = try Fleet(loops: common.loops)
        let openStarted = MonotonicClock.now()
        try fleet.open(tokens: tokens, to: common.server, maxInFlight: common.connectConcurrency, timeout: timeout)
        let openSeconds = MonotonicClock.seconds(since: openStarted)
        let clientAfter = ProcessStatus.residentKiB() ?? 0

        Console.log("holding \(count) idle connections for \(Console.format(hold, decimals: 0)) s")
        let counters = fleet.counters
        let holdEnd = MonotonicClock.now() + Int64(hold * 1e9)
        while MonotonicClock.now() < holdEnd && counters.unexpectedEnds.value == 0 { usleep(100_000) }
        barrier.announce("held")
        try barrier.wait(for: "release", timeout: timeout)

        let pings = fleet.collect { $0.pingFigures() }
        let heartbeat = fleet.collect { $0.heartbeatSeconds }.compactMap { $0 }.first
        fleet.contexts.forEach { context in context.loop.execute { context.sendPingRequests() } }
        let answered = fleet.wait(timeout: 30) { counters.appPingAcks.value >= counters.helloed.value }
        let unexpected = counters.unexpectedEnds.value
        let reasons = counters.reasonSummary
        fleet.close(timeout: 30)
        fleet.shutdown()

        let withoutPing = pings.reduce(0) { $0 + $1.withoutPing }
        let fewest = pings.map(\.fewest).min() ?? 0
        let totalPings = pings.reduce(0) { $0 + $1.total }
        Console.result("mode", "idle")
        Console.result("name", barrier.name)
        Console.result("connections", count)
        Console.result("opened", counters.helloed.value)
        Console.result("open_s", openSeconds, decimals: 1)
        Console.result("hold_s", hold, decimals: 0)
        Console.result("server_heartbeat_s", heartbeat ?? 0)
        Console.result("pings_total", totalPings)
        Console.result("pings_fewest", fewest)
        Console.result("without_ping", withoutPing)
        Console.result("unexpected_closes", unexpected)
        Console.result("ping_requests_answered", counters.appPingAcks.value)
        // Growth of this process from its start: an upper bound per connection, since the logins' buffers and
        // the tokens are in it too (freed heap is reused by the connections, so a baseline taken after the logins
        // would understate it).
        Console.result("client_rss_kib_start", clientStart)
        Console.result("client_rss_kib_open", clientAfter)
        Console.result(
            "client_bytes_per_connection_max", Double(clientAfter - clientStart) * 1024 / Double(max(1, count)),
            decimals: 0)
        if !reasons.isEmpty { Console.result("notes", reasons) }

        var failures: [String] = []
        if unexpected > 0 { failures.append("\(unexpected) connections were closed while idle: \(reasons)") }
        if minPings > 0 && (withoutPing > 0 || fewest < minPings) {
            failures.append(
                "heartbeat not exercised: \(withoutPing) connections saw no ping, the fewest saw \(fewest) "
                    + "(wanted \(minPings) each over \(Int(hold)) s)")
        }
        if !answered {
            failures.append(
                "only \(counters.appPingAcks.value) of \(counters.helloed.value) connections answered a "
                    + "ping request after the idle period")
        }
        return Report.verdict(failures)
    }
}
