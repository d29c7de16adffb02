import Foundation
import Synchronization
import Testing

@testable import ParleyNet

@Suite struct LoopLocalTests {
    final class Counter: Sendable { let hits = Atomic<Int>(0) }

    @Test func eachLoopOfAGroupHasItsOwnInstanceAndForEachReachesThemAll() async throws {
        let group = try EventLoopGroup(threads: 3)
        defer { group.shutdown() }
        let local = LoopLocal { Counter() }
        var seen: [ObjectIdentifier] = []
        for loop in group.loops {
            for _ in 0..<2 { // the same loop finds the same instance
                let id = try await loop.submit { () -> ObjectIdentifier in
                    let mine = local.value
                    mine.hits.add(1, ordering: .relaxed)
                    return ObjectIdentifier(mine)
                }
                seen.append(id)
            }
        }
        #expect(seen[0] == seen[1] && seen[2] == seen[3] && seen[4] == seen[5])
        #expect(Set(seen).count == 3)
        var count = 0
        var total = 0
        local.forEach {
            count += 1; total += $0.hits.load(ordering: .relaxed)
        }
        #expect(count == 3 && total == 6)
    }

    @Test func twoLoopLocalsOnOneLoopKeepTheirOwnInstances() async throws {
        let group = try EventLoopGroup(threads: 1)
        defer { group.shutdown() }
        let first = LoopLocal { Counter() }
        let second = LoopLocal { Counter() }
        let distinct = try await group.loops[0].submit { first.value !== second.value && first.value === first.value }
        #expect(distinct)
    }

    @Test func offTheLoopsEachThreadHasItsOwnInstance() async {
        let local = LoopLocal { Counter() }
        let threads = 4
        let instances = Mutex<[ObjectIdentifier]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let remaining = Atomic<Int>(threads)
            for _ in 0..<threads {
                Thread.detachNewThread {
                    let mine = local.value
                    for _ in 0..<1_000 { local.value.hits.add(1, ordering: .relaxed) }
                    #expect(local.value === mine && mine.hits.load(ordering: .relaxed) == 1_000)
                    instances.withLock { $0.append(ObjectIdentifier(mine)) }
                    if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { done.resume() }
                }
            }
        }
        // The instances outlive their threads (the LoopLocal owns them), so their identities are distinct.
        #expect(Set(instances.withLock { $0 }).count == threads)
        var count = 0
        local.forEach { _ in count += 1 }
        #expect(count == threads)
    }

    /// A loop's instance belongs to the loop: the thread that runs it sees its own instance before and after.
    @Test func theLoopsInstanceIsNotTheRunningThreads() async throws {
        let local = LoopLocal { Counter() }
        let loop = try EventLoop(index: 0)
        let seen = Mutex<(before: ObjectIdentifier?, during: ObjectIdentifier?, after: ObjectIdentifier?)>(
            (nil, nil, nil))
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                let before = ObjectIdentifier(local.value)
                loop.execute {
                    let during = ObjectIdentifier(local.value)
                    seen.withLock { $0.during = during }
                    loop.stop()
                }
                loop.run()
                let after = ObjectIdentifier(local.value)
                seen.withLock {
                    $0.before = before; $0.after = after
                }
                done.resume()
            }
        }
        let ids = seen.withLock { $0 }
        #expect(ids.before != nil && ids.before == ids.after)
        #expect(ids.during != nil && ids.during != ids.before)
    }

    @Test func instancesGoWithTheirLoopLocal() async throws {
        final class Tracked: Sendable {
            let gone: @Sendable () -> Void
            init(gone: @escaping @Sendable () -> Void) { self.gone = gone }
            deinit { gone() }
        }
        let released = Atomic<Int>(0)
        let group = try EventLoopGroup(threads: 2)
        defer { group.shutdown() }
        var local: LoopLocal<Tracked>? = LoopLocal { Tracked { released.add(1, ordering: .relaxed) } }
        for loop in group.loops {
            let captured = local!
            _ = try await loop.submit { ObjectIdentifier(captured.value) }
        }
        #expect(released.load(ordering: .relaxed) == 0)
        local = nil
        // A loop may still hold the last closure that captured it for a moment after answering.
        let deadline = ContinuousClock.now + .seconds(5)
        while released.load(ordering: .relaxed) < 2 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
        #expect(released.load(ordering: .relaxed) == 2)
    }
}
