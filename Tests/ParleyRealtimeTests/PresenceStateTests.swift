import Foundation
import ParleyHTTP
import ParleyJSON
import Testing

@testable import ParleyRealtime

/// Presence as a pure state machine (issue 22): a user's status is the best of their connections on every
/// instance; subscribers get the latest status of every watched user that changed, at most one batch per window.
struct PresenceStateTests {
    typealias User = PresenceState.User

    static let window = Duration.seconds(1)
    let start = ContinuousClock.now
    let date = Date(timeIntervalSince1970: 1_700_000_000)

    func user(_ id: String) -> User { User(appId: 1, userId: id) }
    func at(_ ms: Int) -> ContinuousClock.Instant { start + .milliseconds(ms) }

    /// A state where connection 1 (alice) watches bob, with nothing known about bob elsewhere.
    func aliceWatchingBob(limit: Int = 1000) throws -> PresenceState {
        var state = PresenceState(window: Self.window, maxSubscriptionsPerUser: limit)
        _ = state.connectionOpened(1, user: user("alice"), now: at(0), date: date)
        let asked = try state.subscribing(1, to: [user("bob")])
        #expect(asked == [user("bob")])
        let entries = state.subscribed(1, to: asked, seeds: [user("bob"): .init(lastSeen: date)])
        #expect(entries == [.init(user: user("bob"), status: .offline, lastSeen: date)])
        return state
    }

    @Test func statusesRankOnlineAboveAwayAboveOffline() {
        #expect(PresenceStatus.best([]) == .offline)
        #expect(PresenceStatus.best([.away, .offline]) == .away)
        #expect(PresenceStatus.best([.away, .online, .offline]) == .online)
    }

    @Test func aUserIsTheBestOfTheirConnectionsAndOfflineOnlyWhenTheLastCloses() throws {
        var state = try aliceWatchingBob()
        var effects = state.connectionOpened(2, user: user("bob"), now: at(0), date: date)
        #expect(effects.publish.map(\.status) == [.online])
        #expect(effects.flushAt == at(0))
        #expect(state.flushed(now: at(0)).recipientUsers == [1: [user("bob")]])

        _ = state.connectionOpened(3, user: user("bob"), now: at(10), date: date)
        effects = state.statusSet(2, to: .away, now: at(20), date: date)
        #expect(effects.publish.isEmpty, "still online through connection 3")
        effects = state.statusSet(3, to: .away, now: at(30), date: date)
        #expect(effects.publish.map(\.status) == [.away])
        effects = state.connectionClosed(3, now: at(40), date: date)
        #expect(effects.publish.isEmpty && effects.wentOfflineHere.isEmpty, "connection 2 is still away")
        let later = date.addingTimeInterval(60)
        effects = state.connectionClosed(2, now: at(50), date: later)
        #expect(effects.publish.map(\.status) == [.offline])
        #expect(effects.wentOfflineHere == [user("bob")])
        let flush = state.flushed(now: at(1000))
        #expect(flush.entry(user("bob")) == .init(user: user("bob"), status: .offline, lastSeen: later))
    }

    @Test func aConnectionCannotSayItIsOffline() {
        var state = PresenceState(window: Self.window, maxSubscriptionsPerUser: 10)
        _ = state.connectionOpened(1, user: user("bob"), now: at(0), date: date)
        #expect(state.statusSet(1, to: .offline, now: at(1), date: date) == .init())
        #expect(state.status(ofConnection: 1) == .online)
    }

    @Test func changesWithinAWindowShareOneBatchWithTheLatestStatus() throws {
        var state = try aliceWatchingBob()
        _ = state.connectionOpened(5, user: user("carol"), now: at(0), date: date)
        _ = try state.subscribing(1, to: [user("carol")])
        _ = state.subscribed(1, to: [user("carol")], seeds: [user("carol"): .init()])

        var effects = state.connectionOpened(2, user: user("bob"), now: at(0), date: date)
        #expect(effects.flushAt == at(0))
        _ = state.flushed(now: at(0))
        // The next batch waits a whole window after the last one, whatever changes meanwhile.
        effects = state.statusSet(2, to: .away, now: at(100), date: date)
        #expect(effects.flushAt == at(1000))
        effects = state.statusSet(2, to: .online, now: at(200), date: date)
        #expect(effects.flushAt == nil, "already due")
        effects = state.statusSet(5, to: .away, now: at(300), date: date)
        #expect(effects.flushAt == nil)
        let flush = state.flushed(now: at(1000))
        #expect(flush.recipientUsers == [1: [user("bob"), user("carol")]])
        #expect(flush.entry(user("bob"))?.status == .online)
        #expect(flush.entry(user("carol"))?.status == .away)
        #expect(state.flushed(now: at(2000)).isEmpty, "nothing changed since")
        // After a quiet window a change goes out at once.
        #expect(state.statusSet(5, to: .online, now: at(5000), date: date).flushAt == at(5000))
    }

    @Test func theOtherInstancesCountUntilTheirHeartbeatGoesStale() throws {
        var state = try aliceWatchingBob()
        var effects = state.remoteStatusReceived(user("bob"), instance: "B", status: .away, now: at(0), date: date)
        #expect(effects.publish.isEmpty, "nothing to republish: not this instance's change")
        #expect(state.flushed(now: at(0)).entry(user("bob"))?.status == .away)

        // Bob also connects here, then goes offline on B: still online here.
        _ = state.connectionOpened(2, user: user("bob"), now: at(1000), date: date)
        _ = state.remoteStatusReceived(user("bob"), instance: "B", status: .offline, now: at(1100), date: date)
        #expect(state.flushed(now: at(2000)).entry(user("bob"))?.status == .online)

        // Closed here, online on C: online; C's heartbeat goes stale: offline.
        _ = state.remoteStatusReceived(user("bob"), instance: "C", status: .online, now: at(2100), date: date)
        _ = state.connectionClosed(2, now: at(2200), date: date)
        #expect(state.flushed(now: at(3000)).isEmpty, "online throughout")
        effects = state.liveInstancesRead(["A", "B"], now: at(3100), date: date)
        #expect(effects.flushAt == at(4000))
        #expect(state.flushed(now: at(4000)).entry(user("bob"))?.status == .offline)
        #expect(!state.watchesOtherInstances)
    }

    @Test func unwatchedUsersAreNotTracked() {
        var state = PresenceState(window: Self.window, maxSubscriptionsPerUser: 10)
        _ = state.connectionOpened(1, user: user("alice"), now: at(0), date: date)
        let effects = state.remoteStatusReceived(user("bob"), instance: "B", status: .online, now: at(0), date: date)
        #expect(effects == .init())
        #expect(!state.watchesOtherInstances)
    }

    /// A descriptor that arrives while the subscription's database read is in flight is newer than that read.
    @Test func newsDuringTheSeedWinsOverTheSeed() throws {
        var state = PresenceState(window: Self.window, maxSubscriptionsPerUser: 10)
        _ = state.connectionOpened(1, user: user("alice"), now: at(0), date: date)
        let asked = try state.subscribing(1, to: [user("bob")])
        _ = state.remoteStatusReceived(user("bob"), instance: "B", status: .offline, now: at(1), date: date)
        _ = state.remoteStatusReceived(user("bob"), instance: "C", status: .away, now: at(1), date: date)
        let entries = state.subscribed(
            1, to: asked, seeds: [user("bob"): .init(instances: ["B": .online, "C": .online, "D": .away])])
        #expect(entries.map(\.status) == [.away], "B offline and C away (news), D away (seed)")
        _ = state.remoteStatusReceived(user("bob"), instance: "C", status: .offline, now: at(2), date: date)
        _ = state.remoteStatusReceived(user("bob"), instance: "D", status: .offline, now: at(2), date: date)
        #expect(state.flushed(now: at(2)).entry(user("bob"))?.status == .offline)
    }

    @Test func onlyVisibleUsersAreSubscribedAndTheLimitCountsDistinctUsersPerSubscriber() throws {
        var state = PresenceState(window: Self.window, maxSubscriptionsPerUser: 3)
        _ = state.connectionOpened(1, user: user("alice"), now: at(0), date: date)
        _ = state.connectionOpened(2, user: user("alice"), now: at(0), date: date)
        let asked = try state.subscribing(1, to: [user("b"), user("c"), user("stranger")])
        let entries = state.subscribed(1, to: asked, seeds: [user("b"): .init(), user("c"): .init()])
        #expect(entries.map(\.user) == [user("b"), user("c")])
        #expect(state.subscriptions(ofConnection: 1) == [user("b"), user("c")])
        // Asking again answers for users already watched, in the order asked, and looks nothing up.
        #expect(try state.subscribing(1, to: [user("c"), user("b")]).isEmpty)
        #expect(
            state.currentEntries(ofConnection: 1, [user("c"), user("stranger"), user("b")]).map(\.user) == [
                user("c"), user("b"),
            ])
        // The second device watching the same users costs nothing; a fourth distinct user is refused.
        let again = try state.subscribing(2, to: [user("b"), user("c"), user("d")])
        _ = state.subscribed(2, to: again, seeds: Dictionary(uniqueKeysWithValues: again.map { ($0, .init()) }))
        let refused = #expect(throws: APIError.self) { try state.subscribing(1, to: [user("e")]) }
        #expect(refused?.code == 1510)
        state.unsubscribed(2, from: [user("d")])
        #expect(try state.subscribing(1, to: [user("e")]) == [user("e")])
    }

    @Test func aClosedConnectionLeavesNothingBehind() throws {
        var state = try aliceWatchingBob(limit: 1)
        _ = state.remoteStatusReceived(user("bob"), instance: "B", status: .online, now: at(0), date: date)
        #expect(state.subscriberCount(of: user("bob")) == 1)
        _ = state.connectionClosed(1, now: at(1), date: date)
        #expect(state.subscriberCount(of: user("bob")) == 0)
        #expect(!state.watchesOtherInstances)
        #expect(state.flushed(now: at(1000)).isEmpty)
        // The limit was released with the connection.
        _ = state.connectionOpened(3, user: user("alice"), now: at(2), date: date)
        #expect(try state.subscribing(3, to: [user("carol")]) == [user("carol")])
    }

    @Test func aConnectionThatClosedDuringItsSubscribeSubscribesNothing() throws {
        var state = PresenceState(window: Self.window, maxSubscriptionsPerUser: 10)
        _ = state.connectionOpened(1, user: user("alice"), now: at(0), date: date)
        let asked = try state.subscribing(1, to: [user("bob")])
        _ = state.connectionClosed(1, now: at(1), date: date)
        #expect(state.subscribed(1, to: asked, seeds: [user("bob"): .init()]).isEmpty)
        #expect(state.subscriberCount(of: user("bob")) == 0)
        _ = state.remoteStatusReceived(user("bob"), instance: "B", status: .online, now: at(2), date: date)
        #expect(!state.watchesOtherInstances)
    }

    @Test func hiddenLastSeenIsLeftOut() throws {
        var state = PresenceState(window: Self.window, maxSubscriptionsPerUser: 10)
        _ = state.connectionOpened(1, user: user("alice"), now: at(0), date: date)
        let asked = try state.subscribing(1, to: [user("bob")])
        let entries = state.subscribed(1, to: asked, seeds: [user("bob"): .init(lastSeen: date, hidesLastSeen: true)])
        #expect(entries == [.init(user: user("bob"), status: .offline, lastSeen: nil)])
        _ = state.connectionOpened(2, user: user("bob"), now: at(1), date: date)
        _ = state.connectionClosed(2, now: at(2), date: date)
        #expect(state.flushed(now: at(3)).entry(user("bob"))?.lastSeen == nil)
        state.lastSeenVisibilityChanged(user("bob"), hidden: false)
        _ = state.connectionOpened(3, user: user("bob"), now: at(2000), date: date)
        _ = state.connectionClosed(3, now: at(2001), date: date)
        #expect(state.flushed(now: at(3000)).entry(user("bob"))?.lastSeen == date)
    }

    @Test func descriptorsRoundTrip() throws {
        let descriptor = PresenceDescriptor(appId: 7, instanceId: "i\"x", userId: "u.1@x", status: .away)
        guard case .object(let object) = try JSONValue.parse(descriptor.serialized()) else {
            Issue.record("not an object")
            return
        }
        #expect(PresenceDescriptor(object) == descriptor)
        var broken = object
        broken["s"] = .string("busy")
        #expect(PresenceDescriptor(broken) == nil)
        broken = object
        broken["k"] = .string("t")
        #expect(PresenceDescriptor(broken) == nil)
    }

    /// The flush writes each subscriber's frame in one buffer: the same bytes as the general frame encoder's.
    @Test func aPresenceFrameIsTheEventFrameOfItsEntries() {
        let entries = [
            PresenceHub.encode(.init(user: user("a"), status: .online)),
            PresenceHub.encode(.init(user: user("b\""), status: .offline, lastSeen: date)),
        ]
        for some in [Array(entries.prefix(1)), entries] {
            #expect(
                PresenceHub.frame(some) == ServerFrame.encoded(type: "presence", data: PresenceHub.usersJSON(some)))
        }
    }

    @Test func entriesEncodeAsTheProtocolSays() throws {
        let encoded = PresenceHub.usersJSON([
            PresenceHub.encode(.init(user: user("a"), status: .online)),
            PresenceHub.encode(.init(user: user("b\""), status: .offline, lastSeen: date)),
        ])
        let parsed = try JSONValue.parse(encoded)
        #expect(
            parsed
                == .object(
                    JSONObject([
                        (
                            "users",
                            .array([
                                .object(JSONObject([("userId", "a"), ("status", "online")])),
                                .object(
                                    JSONObject([
                                        ("userId", "b\""), ("status", "offline"),
                                        ("lastSeen", .string(ISO8601.format(date))),
                                    ])),
                            ])
                        )
                    ])))
    }

    @Test(arguments: [
        (nil as JSONValue?, false), (.array([]), false), (.array([.string("ok_1")]), true),
        (.array([.number(JSONNumber(1))]), false), (.array([.string("bad id")]), false), (.string("x"), false),
    ])
    func userIdListsAreValidated(value: JSONValue?, valid: Bool) {
        let result = Result { () throws(APIError) in try PresenceHub.userIDs(value, max: 3, field: "userIds") }
        if valid {
            #expect((try? result.get()) == ["ok_1"])
        } else {
            let error = #expect(throws: APIError.self) { try result.get() }
            #expect(error?.code == APIError.validationFailed.code)
        }
    }
}
