/// `parley-bench fanout`: one group of `members` users, every one online on its own WebSocket; `senders` of them
/// post into the group. Every stored message is delivered to the other members - 1 connections (the sender's
/// own connection gets the ack instead). Reports deliveries per second across all members and their
/// send-to-receive latency.
enum FanoutMode {
    static let optionNames = CommonOptions.names.union(LoadPlan.optionNames).union(["members", "senders"])

    static func run(_ arguments: ArraySlice<String>) throws(BenchError) -> Bool {
        let options = try BenchOptions(arguments, allowed: optionNames)
        let common = try CommonOptions(options, defaultConcurrency: 200)
        let members = try options.int("members", 500, in: 2...2_000)
        let senderCount = try options.int("senders", 5, in: 1...(members - 1))
        let plan = try LoadPlan(options, window: 8)

        // The owner is a registered user: groups are created over REST, which needs an access token, and signed
        // logins give IM tokens only. The other members are created by signed logins.
        let accounts = common.accounts
        let owner = try accounts.register(username: "\(common.runId)-owner", password: "bench-password-\(common.runId)")
        let memberIds = (1..<members).map { "\(common.runId)-m\($0)" }
        let memberTokens = try accounts.imTokens(for: memberIds, workers: common.loginWorkers)
        let groupId = try accounts.createGroup(
            name: "bench \(common.runId)", memberIds: memberIds,
            accessToken: owner.accessToken)
        Console.log("group \(groupId) with \(members) members")

        let fleet = try Fleet(loops: common.loops)
        try fleet.open(
            tokens: [owner.imToken] + memberTokens, to: common.server, maxInFlight: common.connectConcurrency,
            timeout: 120)
        // Connections 1...senders (members, not the owner) send.
        return try LoadTest.runOneToMany(
            fleet, plan: plan, common: common, mode: "fanout", toId: groupId, chatType: "group", members: members,
            senderCount: senderCount)
    }
}
