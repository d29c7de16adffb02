import Foundation
import ParleyLiveSupport
import ParleyObservability
import ParleyTestSupport
import Synchronization
import Testing

@testable import ParleyUpdates

/// `ReleaseCache` without a database: one load for many concurrent checks, invalidation, the TTL backstop.
@Suite("Release cache")
struct ReleaseCacheTests {
    /// Counts loads; each load reads the versions when it starts, then waits while `held` (and `delay`).
    final class CountingLoader: Sendable {
        let loads = Atomic<Int>(0)
        let versions = Mutex<[Int64]>([100])
        let held = Atomic<Bool>(false)
        let delay: Mutex<Duration>

        init(delay: Duration = .milliseconds(50)) { self.delay = Mutex(delay) }

        func load(_ appId: Int64) async throws -> [Release] {
            loads.add(1, ordering: .relaxed)
            let versions = versions.withLock { $0 }
            try await Task.sleep(for: delay.withLock { $0 })
            while held.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(5)) }
            return versions.enumerated().map { UpdateDecisionTests.release(Int64($0.offset + 1), $0.element) }
        }

        var count: Int { loads.load(ordering: .relaxed) }
    }

    static let logger = Logger(sink: LogSink(capturingAt: .error))

    static func newest(_ cache: ReleaseCache) async throws -> Int64? {
        try await cache.releases(appId: 7).track(platform: "ios", channel: "")?.candidates.first?.versionCode
    }

    @Test func concurrentChecksShareOneLoadAndLaterOnesNone() async throws {
        let loader = CountingLoader()
        let cache = ReleaseCache(ttl: .seconds(60), logger: Self.logger) { try await loader.load($0) }
        try await withThrowingTaskGroup(of: Int64?.self) { group in
            for _ in 0..<50 { group.addTask { try await Self.newest(cache) } }
            for try await newest in group { #expect(newest == 100) }
        }
        #expect(loader.count == 1)
        for _ in 0..<100 { _ = try await Self.newest(cache) }
        #expect(loader.count == 1)
    }

    @Test func invalidationLoadsAgainAndALoadStartedBeforeItIsNotKept() async throws {
        let loader = CountingLoader(delay: .zero)
        let cache = ReleaseCache(ttl: .seconds(60), logger: Self.logger) { try await loader.load($0) }
        #expect(try await Self.newest(cache) == 100)
        cache.invalidate(appId: 7)
        // A load in flight (it read [100]) when the release list changes and is invalidated again.
        loader.held.store(true, ordering: .relaxed)
        let early = Task { try await Self.newest(cache) }
        #expect(try await eventually(timeout: .seconds(10)) { loader.count == 2 } != nil)
        loader.versions.withLock { $0 = [100, 110] }
        cache.invalidate(appId: 7)
        let late = Task { try await Self.newest(cache) } // must not join the early load
        #expect(try await eventually(timeout: .seconds(10)) { loader.count == 3 } != nil)
        loader.held.store(false, ordering: .relaxed)
        #expect(try await late.value == 110)
        #expect(try await early.value == 100) // its caller started before the change
        // The early load finished after the change: it must not have replaced 110.
        #expect(try await Self.newest(cache) == 110)
        #expect(loader.count == 3)
        cache.invalidateAll()
        #expect(try await Self.newest(cache) == 110)
        #expect(loader.count == 4)
    }

    @Test func pastTheTTLTheStaleListAnswersWhileItReloads() async throws {
        let loader = CountingLoader(delay: .zero)
        let cache = ReleaseCache(ttl: .milliseconds(100), logger: Self.logger) { try await loader.load($0) }
        #expect(try await Self.newest(cache) == 100)
        loader.versions.withLock { $0 = [100, 120] }
        loader.held.store(true, ordering: .relaxed) // the background reload cannot finish until released
        try await Task.sleep(for: .milliseconds(150))
        #expect(try await Self.newest(cache) == 100) // stale, without waiting for the reload
        #expect(try await Self.newest(cache) == 100) // still one reload in flight
        loader.held.store(false, ordering: .relaxed)
        #expect(try await eventually(timeout: .seconds(10)) { try await Self.newest(cache) == 120 } != nil)
        #expect(loader.count == 2)
    }

    @Test func aFailedLoadIsRetriedByTheNextCheck() async throws {
        let failures = Atomic<Int>(1)
        let cache = ReleaseCache(ttl: .seconds(60), logger: Self.logger) { _ in
            if failures.subtract(1, ordering: .relaxed).oldValue > 0 { throw CancellationError() }
            return [UpdateDecisionTests.release(1, 100)]
        }
        await #expect(throws: CancellationError.self) { try await Self.newest(cache) }
        #expect(try await Self.newest(cache) == 100)
    }
}
