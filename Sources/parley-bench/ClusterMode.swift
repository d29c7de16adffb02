import Glibc

/// `parley-bench cluster`: a fixed, paced load of 1:1 and group messages over WebSockets spread across several
/// instances of one deployment (`--ws-ports`: connection `i` goes to instance `i % n`), so that most deliveries
/// cross the relay between instances. scripts/bench-cluster runs it against 1, 2, 4 and 8 instances on each relay
/// and measures what the servers spend per delivery.
///
/// Connections, in index order: the pairs first, A then B (`2i`, `2i + 1`: with two or more instances the two
/// ends of a pair are on different ones), then the groups, `group-size` consecutive connections each (owner
/// first), so every group has members on every instance. A sends to B in each pair; members 1...`group-senders`
/// send into their group. Every sender sends `rate / senders` messages per second. Logins and group creation go
/// through `--port`.
///
/// With `--idle S` the connections first stay idle for S seconds (announced as `cluster.idle` in `--barrier-dir`),
/// so that the script can measure what the instances cost without load; `cluster.window` announces the measured
/// window of the load.
///
/// Besides the checks of every mode (errors, the total of deliveries, lost connections) each recipient's count is
/// checked: B gets exactly what its A stored, a member exactly what the group's other senders stored.
enum ClusterMode {
    static let optionNames = CommonOptions.names.union(LoadPlan.optionNames).union([
        "ws-ports", "pairs", "groups", "group-size", "group-senders", "barrier-dir", "idle",
    ])

    static func run(_ arguments: ArraySlice<String>) throws(BenchError) -> Bool {
        let options = try BenchOptions(arguments, allowed: optionNames)
        let common = try CommonOptions(options, defaultConcurrency: 200)
        let instances = try endpoints(host: common.host, ports: try options.string("ws-ports", String(common.port)))
        let pairs = try options.int("pairs", 100, in: 0...5_000)
        let groups = try options.int("groups", 10, in: 0...200)
        let groupSize = try options.int("group-size", 20, in: 2...500)
        let groupSenders = try options.int("group-senders", 2, in: 1...(groupSize - 1))
        guard pairs + groups > 0 else { throw BenchError("--pairs and --groups are both 0: nothing to send") }
        let plan = try LoadPlan(options, window: 8, rate: 300)
        let idle = try options.double("idle", 0, in: 0...600)
        let barrier = Barrier(directory: try? options.string("barrier-dir"), name: "cluster")
        let layout = ClusterLayout(pairs: pairs, groups: groups, groupSize: groupSize, groupSenders: groupSenders)
        let runId = common.runId

        // Owners are registered users (groups are created over REST with an access token); everyone else comes
        // from signed logins.
        let accounts = common.accounts
        let pairIds = (0..<pairs).flatMap { ["\(runId)-a\($0)", "\(runId)-b\($0)"] }
        let memberIds = (0..<groups).map { g in (1..<groupSize).map { "\(runId)-g\(g)m\($0)" } }
        let signedTokens = try accounts.imTokens(for: pairIds + memberIds.flatMap { $0 }, workers: common.loginWorkers)
        var tokens = Array(signedTokens.prefix(pairIds.count))
        var groupIds: [String] = []
        for g in 0..<groups {
            let owner = try accounts.register(username: "\(runId)-o\(g)", password: "bench-password-\(runId)")
            groupIds.append(
                try accounts.createGroup(
                    name: "bench \(runId) \(g)", memberIds: memberIds[g], accessToken: owner.accessToken))
            let start = pairIds.count + g * (groupSize - 1)
            tokens += [owner.imToken] + signedTokens[start..<(start + groupSize - 1)]
        }
        Console.log(
            "\(pairs) pairs and \(groups) groups of \(groupSize) over \(instances.count) instances "
                + "(\(tokens.count) WebSockets)")

        let fleet = try Fleet(loops: common.loops)
        try fleet.open(
            tokens.enumerated().map { (token: $1, server: instances[$0 % instances.count]) },
            maxInFlight: common.connectConcurrency, timeout: 120)

        if idle > 0 {
            // Everyone connected, nothing sent: what the instances cost without load (their periodic work).
            usleep(1_000_000) // the connections' own work (presence, registry) settles first
            barrier.announce("idle")
            Console.log("idle for \(Console.format(idle, decimals: 1)) s")
            let end = MonotonicClock.now() + Int64(idle * 1e9)
            while MonotonicClock.now() < end { usleep(50_000) }
        }

        let senderIndexes = layout.senderIndexes
        let rate = plan.rate / Double(senderIndexes.count)
        let senders = senderIndexes.enumerated().map { position, index in
            let group = layout.group(of: index)
            return (
                index: index,
                sender: Sender(
                    toId: group.map { groupIds[$0] } ?? pairIds[index + 1],
                    chatType: group == nil ? "single" : "group", recipients: group == nil ? 1 : groupSize - 1,
                    clientMsgIdPrefix: "\(runId)-\(index)-", window: plan.window, messagesPerSecond: rate,
                    phase: Double(position) / Double(senderIndexes.count))
            )
        }
        let test = LoadTest(plan: plan, barrier: barrier)
        var outcome = try test.run(fleet, senders: senders)

        // Each recipient's count (the loops have stopped: their connections may be read here).
        var received = [Int](repeating: 0, count: tokens.count)
        for context in fleet.contexts {
            for connection in context.connections { received[Int(connection.index)] = Int(connection.messagesReceived) }
        }
        let ackedBySender = Dictionary(uniqueKeysWithValues: senders.map { ($0.index, $0.sender.acked) })
        let expected = layout.expectedDeliveries(acked: ackedBySender)
        var missing = [Int](repeating: 0, count: instances.count)
        var extra = [Int](repeating: 0, count: instances.count)
        var deliveredHere = [Int](repeating: 0, count: instances.count)
        for index in 0..<tokens.count {
            let instance = index % instances.count
            deliveredHere[instance] += received[index]
            missing[instance] += max(0, expected[index] - received[index])
            extra[instance] += max(0, received[index] - expected[index])
        }
        if missing.reduce(0, +) > 0 || extra.reduce(0, +) > 0 {
            outcome.failures.append(
                "recipients' counts differ from what their senders stored: missing by receiving instance "
                    + "\(missing), duplicates by receiving instance \(extra)")
        }

        Console.result("mode", "cluster")
        Console.result("instances", instances.count)
        Console.result("pairs", pairs)
        Console.result("groups", groups)
        Console.result("group_size", groupSize)
        Console.result("group_senders", groupSenders)
        Console.result("senders", senders.count)
        Console.result("connections", tokens.count)
        Console.result("loops", common.loops)
        Console.result(
            "pair_acked", senders.filter { layout.group(of: $0.index) == nil }.map(\.sender.acked).reduce(0, +))
        Console.result(
            "group_acked", senders.filter { layout.group(of: $0.index) != nil }.map(\.sender.acked).reduce(0, +))
        Console.result("delivered_by_instance", deliveredHere.map(String.init).joined(separator: ","))
        Console.result("missing_recipient_deliveries", missing.reduce(0, +))
        Console.result("duplicate_recipient_deliveries", extra.reduce(0, +))
        test.report(outcome)
        return Report.verdict(outcome.failures)
    }

    /// `P1,P2,...`: one endpoint per instance.
    private static func endpoints(host: String, ports: String) throws(BenchError) -> [ServerEndpoint] {
        let parts = ports.split(separator: ",", omittingEmptySubsequences: false)
        guard (1...64).contains(parts.count) else { throw BenchError("--ws-ports: 1 to 64 ports, comma-separated") }
        var endpoints: [ServerEndpoint] = []
        for part in parts {
            guard let port = UInt16(part), port > 0 else { throw BenchError("--ws-ports: \(part) is not a port") }
            endpoints.append(try ServerEndpoint(host: host, port: port))
        }
        return endpoints
    }
}
