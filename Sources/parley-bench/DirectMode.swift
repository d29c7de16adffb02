/// `parley-bench direct`: 1:1 throughput. `pairs` pairs of users, each on its own WebSocket; in every pair A
/// sends text messages to B. Reports stored messages per second (acks), deliveries per second and the
/// send-to-receive latency of each delivery (A's clock in the content, B's clock on receipt).
enum DirectMode {
    static let optionNames = CommonOptions.names.union(LoadPlan.optionNames).union(["pairs"])

    static func run(_ arguments: ArraySlice<String>) throws(BenchError) -> Bool {
        let options = try BenchOptions(arguments, allowed: optionNames)
        let common = try CommonOptions(options, defaultConcurrency: 200)
        let pairs = try options.int("pairs", 100, in: 1...5_000)
        let plan = try LoadPlan(options, window: 16)

        let senderIds = (0..<pairs).map { "\(common.runId)-a\($0)" }
        let receiverIds = (0..<pairs).map { "\(common.runId)-b\($0)" }
        let tokens = try common.accounts.imTokens(for: senderIds + receiverIds, workers: common.loginWorkers)

        let fleet = try Fleet(loops: common.loops)
        try fleet.open(tokens: tokens, to: common.server, maxInFlight: common.connectConcurrency, timeout: 120)
        // Connection i (0..<pairs) is sender i; connection pairs + i is its receiver.
        let senders = (0..<pairs).map { i in
            (
                index: i,
                sender: Sender(
                    toId: receiverIds[i], chatType: "single", recipients: 1, clientMsgIdPrefix: "\(common.runId)-\(i)-",
                    window: plan.window, messagesPerSecond: plan.rate / Double(pairs),
                    phase: Double(i) / Double(pairs))
            )
        }
        let test = LoadTest(plan: plan)
        let outcome = try test.run(fleet, senders: senders)
        Console.result("mode", "direct")
        Console.result("pairs", pairs)
        Console.result("connections", 2 * pairs)
        Console.result("loops", common.loops)
        test.report(outcome)
        return Report.verdict(outcome.failures)
    }
}
