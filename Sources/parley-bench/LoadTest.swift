import Glibc

/// How long and how hard to send.
struct LoadPlan {
    static let optionNames: Set<String> = ["window", "rate", "warmup", "duration", "drain"]

    /// Requests in flight per sender.
    var window: Int
    /// Messages per second over all senders; 0: unpaced (each sender refills its window on every answer).
    var rate: Double
    var warmup: Double
    var duration: Double
    /// After sending stops: how long answers and deliveries may stop coming before the rest counts as missing
    /// (the drain ends sooner when everything arrived, and after ten times this at most).
    var drain: Double

    init(_ options: BenchOptions, window: Int, rate: Double = 0) throws(BenchError) {
        self.window = try options.int("window", window, in: 1...60) // the gateway pauses a connection at 64
        self.rate = try options.double("rate", rate, in: 0...1_000_000)
        warmup = try options.double("warmup", 3, in: 0...600)
        duration = try options.double("duration", 10, in: 1...3600)
        drain = try options.double("drain", 10, in: 1...600)
    }
}

/// One load run on open connections: warm-up, measured window, drain, then the checks every mode shares.
struct LoadTest {
    var plan: LoadPlan
    /// Where to announce `window` when the measured window starts (the script measures the servers' CPU and
    /// queries from then on); nil: nowhere.
    var barrier: Barrier?

    init(plan: LoadPlan, barrier: Barrier? = nil) {
        self.plan = plan
        self.barrier = barrier
    }

    struct Outcome {
        var sent = 0, acked = 0, errors = 0, delivered = 0, expected = 0
        var windowAcks = 0, windowDeliveries = 0
        var ackMismatches = 0, unexpectedEnds = 0, foreignMessages = 0, otherFrames = 0
        var sortedLatencies: [Int64] = []
        var sortedAckLatencies: [Int64] = []
        /// How long the drain took.
        var drainSeconds = 0.0
        var reasons = ""
        var failures: [String] = []
    }

    /// Runs the load from `senders` (connection index, sender), then closes the fleet and stops its loops.
    func run(_ fleet: Fleet, senders: [(index: Int, sender: Sender)]) throws(BenchError) -> Outcome {
        try fleet.attach(senders)
        let counters = fleet.counters
        let begin = MonotonicClock.now() + 100_000_000
        let windowStart = begin + Int64(plan.warmup * 1e9)
        let end = windowStart + Int64(plan.duration * 1e9)
        Console.log(
            "sending: \(senders.count) senders, window \(plan.window), "
                + (plan.rate > 0 ? "paced at \(Console.format(plan.rate, decimals: 0)) messages/s" : "unpaced")
                + "; warm-up \(plan.warmup) s, measuring \(plan.duration) s")
        fleet.startLoad(begin: begin, windowStart: windowStart, end: end)
        var announced = false
        while MonotonicClock.now() < end {
            let now = MonotonicClock.now()
            if !announced && now >= windowStart {
                barrier?.announce("window")
                announced = true
            }
            // Short naps before the window starts, so that the announcement is not late.
            usleep(announced ? 200_000 : UInt32(max(1_000, min(200_000, (windowStart - now) / 1_000))))
            if counters.unexpectedEnds.value > 0 && MonotonicClock.now() < end {
                Console.log("connections ended during the run: \(counters.reasonSummary)")
                break
            }
        }
        // Drain: wait while answers and deliveries keep coming (a saturated server works off its queue slowly);
        // whatever has not come after `drain` seconds without progress, or after ten drains in all, is missing.
        let drainStart = MonotonicClock.now()
        var progress = -1
        var lastProgress = drainStart
        let drainEnd = MonotonicClock.now() + Int64(10 * plan.drain * 1e9)
        _ = fleet.wait(timeout: 10 * plan.drain) {
            let answered = counters.acked.value + counters.errors.value
            if answered >= counters.sent.value && counters.delivered.value >= counters.expectedDeliveries.value {
                return true
            }
            let now = MonotonicClock.now()
            if answered + counters.delivered.value != progress {
                progress = answered + counters.delivered.value
                lastProgress = now
            }
            return now - lastProgress > Int64(plan.drain * 1e9) || now >= drainEnd
        }
        let drainSeconds = MonotonicClock.seconds(since: drainStart)
        usleep(300_000) // late duplicates would show up here
        var outcome = Outcome()
        outcome.drainSeconds = drainSeconds
        outcome.sent = counters.sent.value
        outcome.acked = counters.acked.value
        outcome.errors = counters.errors.value
        outcome.delivered = counters.delivered.value
        outcome.expected = counters.expectedDeliveries.value
        outcome.windowAcks = counters.windowAcks.value
        outcome.windowDeliveries = counters.windowDeliveries.value
        outcome.ackMismatches = counters.ackMismatches.value
        outcome.unexpectedEnds = counters.unexpectedEnds.value
        outcome.foreignMessages = counters.foreignMessages.value
        outcome.otherFrames = counters.otherFrames.value
        outcome.reasons = counters.reasonSummary
        fleet.close(timeout: 10)
        fleet.shutdown()
        outcome.sortedLatencies = fleet.latencies().sorted()
        outcome.sortedAckLatencies = fleet.ackLatencies().sorted()
        outcome.failures = checks(outcome)
        return outcome
    }

    /// The rules of the issue: at most 0.1% of sends answered with errors, every stored message delivered
    /// (exactly once), no connection lost.
    private func checks(_ o: Outcome) -> [String] {
        var failures: [String] = []
        if o.sent == 0 { failures.append("nothing was sent") }
        if o.errors * 1000 > o.sent {
            failures.append("\(o.errors) of \(o.sent) sends answered with an error (over 0.1%)")
        }
        if o.acked + o.errors < o.sent {
            failures.append(
                "\(o.sent - o.acked - o.errors) sends got no answer (drain: \(plan.drain) s without progress)")
        }
        if o.delivered < o.expected {
            failures.append(
                "\(o.expected - o.delivered) of \(o.expected) deliveries missing (drain: \(plan.drain) s "
                    + "without progress)")
        } else if o.delivered > o.expected {
            failures.append("\(o.delivered - o.expected) deliveries more than stored messages call for (duplicates)")
        }
        if o.ackMismatches > 0 { failures.append("\(o.ackMismatches) answers out of request order") }
        if o.unexpectedEnds > 0 { failures.append("\(o.unexpectedEnds) connections ended during the run") }
        if o.sortedLatencies.isEmpty { failures.append("no delivery inside the measured window") }
        return failures
    }

    /// Prints the figures (`key=value` on stdout) and a one-line summary on stderr.
    func report(_ o: Outcome) {
        let seconds = plan.duration
        Console.result("window", plan.window)
        Console.result("rate", plan.rate, decimals: 0)
        Console.result("warmup_s", plan.warmup, decimals: 1)
        Console.result("duration_s", seconds, decimals: 1)
        Console.result("drain_s", o.drainSeconds, decimals: 1)
        Console.result("sent", o.sent)
        Console.result("acked", o.acked)
        Console.result("errors", o.errors)
        Console.result("delivered", o.delivered)
        Console.result("expected_deliveries", o.expected)
        Console.result("foreign_messages", o.foreignMessages)
        Console.result("other_frames", o.otherFrames)
        Console.result("acked_per_s", Double(o.windowAcks) / seconds, decimals: 0)
        Console.result("delivered_per_s", Double(o.windowDeliveries) / seconds, decimals: 0)
        Console.result("samples", o.sortedLatencies.count)
        Console.result("p50_ms", Percentile.milliseconds(o.sortedLatencies, 0.50), decimals: 2)
        Console.result("p90_ms", Percentile.milliseconds(o.sortedLatencies, 0.90), decimals: 2)
        Console.result("p99_ms", Percentile.milliseconds(o.sortedLatencies, 0.99), decimals: 2)
        Console.result("max_ms", Percentile.milliseconds(o.sortedLatencies, 1.0), decimals: 2)
        Console.result("ack_p50_ms", Percentile.milliseconds(o.sortedAckLatencies, 0.50), decimals: 2)
        Console.result("ack_p99_ms", Percentile.milliseconds(o.sortedAckLatencies, 0.99), decimals: 2)
        if !o.reasons.isEmpty { Console.result("notes", o.reasons) }
        Console.log(
            "stored \(Console.format(Double(o.windowAcks) / seconds, decimals: 0))/s, delivered "
                + "\(Console.format(Double(o.windowDeliveries) / seconds, decimals: 0))/s, p50 "
                + "\(Console.format(Percentile.milliseconds(o.sortedLatencies, 0.5), decimals: 2)) ms, p99 "
                + "\(Console.format(Percentile.milliseconds(o.sortedLatencies, 0.99), decimals: 2)) ms (send to ack: p50 "
                + "\(Console.format(Percentile.milliseconds(o.sortedAckLatencies, 0.5), decimals: 2)) ms, p99 "
                + "\(Console.format(Percentile.milliseconds(o.sortedAckLatencies, 0.99), decimals: 2)) ms)")
    }
}

/// Nearest-rank percentiles.
enum Percentile {
    /// The value at rank ceil(p * n) of the sorted samples, in milliseconds; NaN without samples.
    static func milliseconds(_ sorted: [Int64], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let rank = max(1, Int((p * Double(sorted.count)).rounded(.up)))
        return Double(sorted[min(rank, sorted.count) - 1]) / 1e6
    }
}

extension LoadTest {
    /// The one-to-many modes (a group, a chat room): connections 1...senderCount send into the one conversation
    /// `toId` that all `members` connections receive, then the run is reported under `mode`.
    static func runOneToMany(
        _ fleet: Fleet, plan: LoadPlan, common: CommonOptions, mode: String, toId: String, chatType: String,
        members: Int, senderCount: Int
    ) throws(BenchError) -> Bool {
        let senders = (1...senderCount).map { i in
            (
                index: i,
                sender: Sender(
                    toId: toId, chatType: chatType, recipients: members - 1, clientMsgIdPrefix: "\(common.runId)-\(i)-",
                    window: plan.window, messagesPerSecond: plan.rate / Double(senderCount),
                    phase: Double(i - 1) / Double(senderCount))
            )
        }
        let test = LoadTest(plan: plan)
        let outcome = try test.run(fleet, senders: senders)
        Console.result("mode", mode)
        Console.result("members", members)
        Console.result("senders", senderCount)
        Console.result("connections", members)
        Console.result("loops", common.loops)
        test.report(outcome)
        return Report.verdict(outcome.failures)
    }
}
