import Foundation
import ParleyHTTP

/// The presence of one instance, as a pure state machine (the hub runs it under a lock and does the I/O): the
/// status of each local connection, who each connection watches, the index watched user -> subscriber
/// connections, what the other instances last said about watched users, and the coalescing of `presence` events.
///
/// Events are named in the past tense and return `Effects` for the hub to carry out. The clock is passed in.
struct PresenceState {
    typealias User = ConnectionRegistry.UserKey

    /// One user's presence as a subscriber sees it. `lastSeen` only when offline and the user shows it.
    struct Entry: Equatable, Sendable {
        var user: User
        var status: PresenceStatus
        var lastSeen: Date?
    }

    /// What the rest of the deployment knows of a user when a subscription starts (read from the database).
    struct Seed: Equatable, Sendable {
        /// The user's status on each other live instance.
        var instances: [String: PresenceStatus] = [:]
        var lastSeen: Date?
        var hidesLastSeen = false
    }

    struct Effects: Equatable {
        /// Users whose status on this instance changed: tell the other instances.
        var publish: [(user: User, status: PresenceStatus)] = []
        /// Users whose last connection here closed: record when they were last seen.
        var wentOfflineHere: [User] = []
        /// Flush the coalesced events at this instant (set when a flush becomes due and none was due before).
        var flushAt: ContinuousClock.Instant?

        static func == (lhs: Effects, rhs: Effects) -> Bool {
            lhs.publish.map(\.user) == rhs.publish.map(\.user) && lhs.publish.map(\.status) == rhs.publish.map(\.status)
                && lhs.wentOfflineHere == rhs.wentOfflineHere && lhs.flushAt == rhs.flushAt
        }
    }

    /// One frame's worth of changes for each subscriber connection: the changed users' entries (each encoded once)
    /// and, per connection, the positions in `entries` of those it gets.
    struct Flush: Equatable {
        var entries: [Entry] = []
        var recipients: [UInt64: [Int]] = [:]

        var isEmpty: Bool { recipients.isEmpty }

        /// The users each connection gets, by id.
        var recipientUsers: [UInt64: [User]] { recipients.mapValues { $0.map { entries[$0].user } } }

        func entry(_ user: User) -> Entry? { entries.first { $0.user == user } }
    }

    /// At most one `presence` frame per connection per this window.
    let window: Duration
    /// Distinct users one user's connections may watch together.
    let maxSubscriptionsPerUser: Int

    private struct Connection {
        var user: User
        var status: PresenceStatus
        var subscriptions: Set<User> = []
        /// The same users by slot (the flush checks these: no string hashing per entry).
        var subscribedSlots: Set<UInt32> = []
    }

    private var connections: [UInt64: Connection] = [:]
    private var localConnections: [User: Set<UInt64>] = [:]
    /// The last status published for each user with a connection here.
    private var localStatus: [User: PresenceStatus] = [:]
    /// Watched user -> the local connections subscribed to them (the fan-out index).
    private var watchers: [User: Set<UInt64>] = [:]
    /// Subscriber user -> watched user -> how many of the subscriber's connections watch them (the limit's count).
    private var watchedBy: [User: [User: Int]] = [:]
    /// Users whose subscription is being prepared (database read in flight): the other instances' news about them
    /// is kept, so a seed read before it cannot override it.
    private var seeding: [User: Int] = [:]
    /// Watched users' statuses on other instances, by instance id (offline kept while seeding, as a tombstone).
    private var remote: [User: [String: PresenceStatus]] = [:]
    /// Watched users' status as last told to subscribers.
    private var announced: [User: PresenceStatus] = [:]
    private var lastSeen: [User: Date] = [:]
    private var hidesLastSeen: Set<User> = []
    /// Watched users get a small integer (a slot) so that the per-subscriber work of a change (marking each
    /// subscriber dirty) and of a flush never hashes or compares user id strings.
    private var slots: [User: UInt32] = [:]
    private var freeSlots: [UInt32] = []
    private var slotCount: UInt32 = 0
    /// Slot -> position in `changed` of the user's latest entry in this window (-1: unchanged).
    private var changedPosition: [Int] = []
    private var changed: [Entry] = []
    /// Subscriber connection -> slots of watched users that changed (repeats possible; removed at the flush).
    private var dirty: [UInt64: [UInt32]] = [:]
    private var flushDue = false
    private var lastFlush: ContinuousClock.Instant?

    init(window: Duration, maxSubscriptionsPerUser: Int) {
        self.window = window
        self.maxSubscriptionsPerUser = maxSubscriptionsPerUser
    }

    // MARK: Reads

    func status(ofConnection id: UInt64) -> PresenceStatus? { connections[id]?.status }

    func subscriptions(ofConnection id: UInt64) -> Set<User> { connections[id]?.subscriptions ?? [] }

    func subscriberCount(of user: User) -> Int { watchers[user]?.count ?? 0 }

    /// Whether anything is kept about other instances (the hub then checks their heartbeats).
    var watchesOtherInstances: Bool { !remote.isEmpty }

    // MARK: Local connections

    mutating func connectionOpened(_ id: UInt64, user: User, now: ContinuousClock.Instant, date: Date) -> Effects {
        connections[id] = Connection(user: user, status: .online)
        localConnections[user, default: []].insert(id)
        var effects = Effects()
        localChanged(user, now: now, date: date, &effects)
        return effects
    }

    /// A connection's own report; `offline` is not something a connection can say while open.
    mutating func statusSet(_ id: UInt64, to status: PresenceStatus, now: ContinuousClock.Instant, date: Date)
        -> Effects
    {
        var effects = Effects()
        guard status != .offline, connections[id] != nil, connections[id]?.status != status else { return effects }
        connections[id]!.status = status
        localChanged(connections[id]!.user, now: now, date: date, &effects)
        return effects
    }

    mutating func connectionClosed(_ id: UInt64, now: ContinuousClock.Instant, date: Date) -> Effects {
        var effects = Effects()
        guard let connection = connections.removeValue(forKey: id) else { return effects }
        for watched in connection.subscriptions { unwatch(watched, by: id, subscriber: connection.user) }
        dirty[id] = nil
        localConnections[connection.user]?.remove(id)
        if localConnections[connection.user]?.isEmpty == true { localConnections[connection.user] = nil }
        localChanged(connection.user, now: now, date: date, &effects)
        return effects
    }

    private func localAggregate(_ user: User) -> PresenceStatus {
        PresenceStatus.best((localConnections[user] ?? []).compactMap { connections[$0]?.status })
    }

    private mutating func localChanged(_ user: User, now: ContinuousClock.Instant, date: Date, _ effects: inout Effects)
    {
        let status = localAggregate(user)
        guard status != (localStatus[user] ?? .offline) else { return }
        localStatus[user] = status == .offline ? nil : status
        effects.publish.append((user, status))
        if status == .offline { effects.wentOfflineHere.append(user) }
        overallChanged(user, now: now, date: date, &effects)
    }

    private func overall(_ user: User) -> PresenceStatus {
        max(localAggregate(user), PresenceStatus.best(remote[user]?.values ?? [:].values))
    }

    private func entry(_ user: User, _ status: PresenceStatus) -> Entry {
        Entry(
            user: user, status: status,
            lastSeen: status == .offline && !hidesLastSeen.contains(user) ? lastSeen[user] : nil)
    }

    private mutating func overallChanged(
        _ user: User, now: ContinuousClock.Instant, date: Date, _ effects: inout Effects
    ) {
        guard let subscribers = watchers[user], !subscribers.isEmpty else { return }
        let status = overall(user)
        guard announced[user] != status else { return }
        if status == .offline { lastSeen[user] = date }
        announced[user] = status
        guard let slot = slots[user] else { return }
        let position = changedPosition[Int(slot)]
        if position >= 0 {
            changed[position] = entry(user, status)
        } else {
            changedPosition[Int(slot)] = changed.count
            changed.append(entry(user, status))
        }
        for subscriber in subscribers { dirty[subscriber, default: []].append(slot) }
        if !flushDue {
            flushDue = true
            let earliest = lastFlush.map { $0 + window } ?? now
            effects.flushAt = max(now, earliest)
        }
    }

    // MARK: Subscriptions

    /// The first half of a subscription: checks the limit (counting every requested user not yet watched by the
    /// subscriber, before the database says which of them are visible) and returns the users to look up. The hub
    /// must end it with `subscribed` (or `subscribeFailed`) with the same users.
    mutating func subscribing(_ id: UInt64, to users: [User]) throws(APIError) -> [User] {
        guard let connection = connections[id] else { return [] }
        let fresh = users.filter { !connection.subscriptions.contains($0) }
        let watched = watchedBy[connection.user] ?? [:]
        let added = Set(fresh).subtracting(watched.keys).count
        guard watched.count + added <= maxSubscriptionsPerUser else {
            throw APIError.presenceSubscriptionLimit.with(
                message:
                    "a user may watch at most \(maxSubscriptionsPerUser) users; \(watched.count) are watched already")
        }
        for user in fresh { seeding[user, default: 0] += 1 }
        return fresh
    }

    /// The second half: `seeds` holds the users the subscriber may see (the others are dropped). Returns each
    /// subscribed user's current entry, in the order asked.
    mutating func subscribed(_ id: UInt64, to users: [User], seeds: [User: Seed]) -> [Entry] {
        endSeeding(users)
        guard var connection = connections[id] else {
            for user in users { forgetIfUnwatched(user) }
            return []
        }
        var entries: [Entry] = []
        for user in users {
            guard let seed = seeds[user] else {
                forgetIfUnwatched(user)
                continue
            }
            var known = remote[user] ?? [:]
            for (instance, status) in seed.instances where known[instance] == nil { known[instance] = status }
            known = known.filter { $0.value != .offline || seeding[user] != nil }
            remote[user] = known.isEmpty ? nil : known
            if seed.hidesLastSeen { hidesLastSeen.insert(user) } else { hidesLastSeen.remove(user) }
            if lastSeen[user] == nil || (seed.lastSeen.map { $0 > lastSeen[user]! } ?? false) {
                lastSeen[user] = seed.lastSeen
            }
            if connection.subscriptions.insert(user).inserted {
                connection.subscribedSlots.insert(slot(for: user))
                watchers[user, default: []].insert(id)
                watchedBy[connection.user, default: [:]][user, default: 0] += 1
            }
            let status = overall(user)
            announced[user] = status
            entries.append(entry(user, status))
        }
        connections[id] = connection
        return entries
    }

    /// The current entry of each of `users` the connection watches, in the order given (a subscribe's ack, which
    /// also answers for users it watched already).
    func currentEntries(ofConnection id: UInt64, _ users: [User]) -> [Entry] {
        guard let connection = connections[id] else { return [] }
        return users.filter { connection.subscriptions.contains($0) }.map { entry($0, overall($0)) }
    }

    /// The database could not be read: the users stay unwatched by this connection.
    mutating func subscribeFailed(_ id: UInt64, to users: [User]) {
        endSeeding(users)
        for user in users { forgetIfUnwatched(user) }
    }

    mutating func unsubscribed(_ id: UInt64, from users: [User]) {
        guard let connection = connections[id] else { return }
        for user in users where connection.subscriptions.contains(user) {
            connections[id]!.subscriptions.remove(user)
            if let slot = slots[user] { connections[id]!.subscribedSlots.remove(slot) }
            unwatch(user, by: id, subscriber: connection.user)
        }
    }

    private mutating func endSeeding(_ users: [User]) {
        for user in users {
            let left = (seeding[user] ?? 1) - 1
            seeding[user] = left > 0 ? left : nil
        }
    }

    private mutating func unwatch(_ user: User, by id: UInt64, subscriber: User) {
        watchers[user]?.remove(id)
        if watchers[user]?.isEmpty == true { watchers[user] = nil }
        if let count = watchedBy[subscriber]?[user] {
            watchedBy[subscriber]![user] = count > 1 ? count - 1 : nil
            if watchedBy[subscriber]!.isEmpty { watchedBy[subscriber] = nil }
        }
        forgetIfUnwatched(user)
    }

    private mutating func forgetIfUnwatched(_ user: User) {
        guard watchers[user] == nil, seeding[user] == nil else { return }
        if let slot = slots.removeValue(forKey: user) {
            // A later user of this slot must not inherit this one's pending entry.
            if changedPosition[Int(slot)] >= 0 { changedPosition[Int(slot)] = -1 }
            freeSlots.append(slot)
        }
        remote[user] = nil
        announced[user] = nil
        lastSeen[user] = nil
        hidesLastSeen.remove(user)
    }

    private mutating func slot(for user: User) -> UInt32 {
        if let slot = slots[user] { return slot }
        let slot: UInt32
        if let free = freeSlots.popLast() {
            slot = free
        } else {
            slot = slotCount
            slotCount += 1
            changedPosition.append(-1)
        }
        slots[user] = slot
        return slot
    }

    /// The user changed whether others see their `lastSeen` (on this instance, at once).
    mutating func lastSeenVisibilityChanged(_ user: User, hidden: Bool) {
        guard watchers[user] != nil || seeding[user] != nil else { return }
        if hidden { hidesLastSeen.insert(user) } else { hidesLastSeen.remove(user) }
    }

    // MARK: Other instances

    /// Another instance published the user's status there.
    mutating func remoteStatusReceived(
        _ user: User, instance: String, status: PresenceStatus, now: ContinuousClock.Instant, date: Date
    ) -> Effects {
        var effects = Effects()
        guard watchers[user] != nil || seeding[user] != nil else { return effects }
        if status == .offline && seeding[user] == nil {
            remote[user]?[instance] = nil
            if remote[user]?.isEmpty == true { remote[user] = nil }
        } else {
            remote[user, default: [:]][instance] = status
        }
        overallChanged(user, now: now, date: date, &effects)
        return effects
    }

    /// The instances whose heartbeat is fresh: what the others said no longer counts (they crashed or stopped).
    mutating func liveInstancesRead(_ live: Set<String>, now: ContinuousClock.Instant, date: Date) -> Effects {
        var effects = Effects()
        for (user, byInstance) in remote {
            let kept = byInstance.filter { live.contains($0.key) }
            guard kept.count != byInstance.count else { continue }
            remote[user] = kept.isEmpty ? nil : kept
            overallChanged(user, now: now, date: date, &effects)
        }
        return effects
    }

    // MARK: Coalescing

    /// The flush is due: every subscriber connection with changes gets the latest entry of each changed user it
    /// still watches. The next flush is at least `window` later.
    mutating func flushed(now: ContinuousClock.Instant) -> Flush {
        var flush = Flush()
        for (id, changedSlots) in dirty {
            guard let connection = connections[id] else { continue }
            var positions: [Int] = []
            positions.reserveCapacity(changedSlots.count)
            for slot in changedSlots where connection.subscribedSlots.contains(slot) {
                let position = changedPosition[Int(slot)]
                if position >= 0 { positions.append(position) }
            }
            guard !positions.isEmpty else { continue }
            positions.sort()
            var unique = positions
            unique.removeAll(keepingCapacity: true)
            for position in positions where unique.last != position { unique.append(position) }
            flush.recipients[id] = unique
        }
        for entry in changed {
            if let slot = slots[entry.user] { changedPosition[Int(slot)] = -1 }
        }
        flush.entries = changed
        dirty.removeAll(keepingCapacity: true)
        changed.removeAll(keepingCapacity: true)
        flushDue = false
        lastFlush = now
        return flush
    }
}
