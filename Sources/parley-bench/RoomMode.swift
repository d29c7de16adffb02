import ParleyJSON

/// `parley-bench room`: one chat room with `members` users inside, each on its own WebSocket (signed logins, then
/// `room_enter` on every connection); `senders` of them post into the room. Every stored message is delivered to
/// the other `members - 1` connections inside (the sender's gets the ack instead). Reports deliveries per second and
/// their send-to-receive latency, as fan-out does for a group.
enum RoomMode {
    static let optionNames = CommonOptions.names.union(LoadPlan.optionNames).union(["members", "senders"])

    static func run(_ arguments: ArraySlice<String>) throws(BenchError) -> Bool {
        let options = try BenchOptions(arguments, allowed: optionNames)
        let common = try CommonOptions(options, defaultConcurrency: 256)
        // The hard open-files limit here is 20,000 per process: one process holds at most about 19,000 sockets.
        let members = try options.int("members", 10_000, in: 2...19_000)
        let senderCount = try options.int("senders", 1, in: 1...(members - 1))
        let plan = try LoadPlan(options, window: 8)

        // The creator is a registered user (rooms are created over REST with an access token); everyone else
        // comes from signed logins.
        let accounts = common.accounts
        let owner = try accounts.register(username: "\(common.runId)-owner", password: "bench-password-\(common.runId)")
        let memberIds = (1..<members).map { "\(common.runId)-m\($0)" }
        let memberTokens = try accounts.imTokens(for: memberIds, workers: common.loginWorkers)
        let roomId = try accounts.createRoom(name: "bench \(common.runId)", accessToken: owner.accessToken)

        let fleet = try Fleet(loops: common.loops)
        try fleet.open(
            tokens: [owner.imToken] + memberTokens, to: common.server, maxInFlight: common.connectConcurrency,
            timeout: 300)
        let started = MonotonicClock.now()
        var enter = Array(#"{"type":"room_enter","reqId":"enter","data":{"roomId":"#.utf8)
        JSONString.append(roomId, to: &enter)
        enter += Array("}}".utf8)
        let frame = enter
        for context in fleet.contexts { context.loop.execute { context.sendToAll(frame) } }
        let counters = fleet.counters
        guard fleet.wait(timeout: 120, { counters.appPingAcks.value >= members }) else {
            throw BenchError(
                "only \(counters.appPingAcks.value) of \(members) connections entered the room: \(counters.reasonSummary)"
            )
        }
        Console.log(
            "room \(roomId): \(members) connections inside in "
                + "\(Console.format(MonotonicClock.seconds(since: started), decimals: 1)) s")

        // Connections 1...senders (not the creator) send.
        return try LoadTest.runOneToMany(
            fleet, plan: plan, common: common, mode: "room", toId: roomId, chatType: "room", members: members,
            senderCount: senderCount)
    }
}
