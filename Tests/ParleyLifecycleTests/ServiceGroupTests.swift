import Foundation
import ParleyLifecycle
import ParleyObservability
import ParleyTestSupport
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(1))) struct ServiceGroupTests {
    @Test func preparesInOrderAndStopsInReverseWhenAskedTo() async throws {
        let journal = Journal()
        let group = ServiceGroup(
            services: ["A", "B", "C"].map { RecordingService(name: $0, journal: journal) },
            logger: Logger(sink: LogSink(capturingAt: .error)))
        let (stopRequests, stop) = AsyncStream.makeStream(of: Void.self)
        let running = Task { try await group.run(until: { for await _ in stopRequests {} }) }
        #expect(try await eventually(timeout: .seconds(30)) { journal.contains("run C") } != nil)
        // Each preparation ends before the next begins.
        #expect(
            journal.entries(starting: "prepar") == [
                "prepare A", "prepared A", "prepare B", "prepared B",
                "prepare C", "prepared C",
            ])
        #expect(journal.entries(starting: "cancelled").isEmpty)

        stop.finish()
        try await running.value
        // Each service has finished stopping before the one started before it is asked to.
        #expect(
            journal.entries(starting: "cancelled", "stopped") == [
                "cancelled C", "stopped C", "cancelled B",
                "stopped B", "cancelled A", "stopped A",
            ])
    }

    @Test func stopsInReverseWhenItsTaskIsCancelled() async throws {
        let journal = Journal()
        let group = ServiceGroup(
            services: ["A", "B"].map { RecordingService(name: $0, journal: journal) },
            logger: Logger(sink: LogSink(capturingAt: .error)))
        let running = Task { try await group.run(until: { await Task.waitUntilCancelled() }) }
        #expect(try await eventually(timeout: .seconds(30)) { journal.contains("run B") } != nil)
        running.cancel()
        try await running.value
        #expect(
            journal.entries(starting: "cancelled", "stopped") == [
                "cancelled B", "stopped B", "cancelled A",
                "stopped A",
            ])
    }

    @Test func aFailingServiceIsLoggedAndStopsTheGroup() async throws {
        let journal = Journal()
        let sink = LogSink(capturingAt: .debug)
        var failing = RecordingService(name: "B", journal: journal)
        failing.failure = .throwAfterRunOf("C")
        let group = ServiceGroup(
            services: [
                RecordingService(name: "A", journal: journal), failing,
                RecordingService(name: "C", journal: journal),
            ],
            logger: Logger(sink: sink))
        await #expect(throws: Breakdown.self) {
            try await group.run(until: { await Task.waitUntilCancelled() })
        }
        #expect(
            journal.entries(starting: "cancelled", "stopped") == [
                "cancelled C", "stopped C", "cancelled A",
                "stopped A",
            ])
        let failure = try #require(sink.capturedText.split(separator: "\n").first { $0.contains("service failed") })
        #expect(failure.contains(#""level":"error""#))
        #expect(failure.contains(#""service":"B""#))
        #expect(failure.contains("the disk is on fire"))
    }

    @Test func aServiceThatReturnsWhileItShouldRunIsAFailure() async throws {
        let journal = Journal()
        var quitter = RecordingService(name: "B", journal: journal)
        quitter.failure = .returnAfterRunOf("C")
        let group = ServiceGroup(
            services: [
                RecordingService(name: "A", journal: journal), quitter,
                RecordingService(name: "C", journal: journal),
            ],
            logger: Logger(sink: LogSink(capturingAt: .error)))
        do {
            try await group.run(until: { await Task.waitUntilCancelled() })
            Issue.record("the group went on after a service returned")
        } catch let error as ServiceGroup.EndedEarly {
            #expect(error.service == "B")
        }
        #expect(journal.entries(starting: "stopped") == ["stopped C", "stopped A"])
    }

    @Test func aFailedPreparationStopsWhatRunsAndStartsNothingMore() async throws {
        let journal = Journal()
        let sink = LogSink(capturingAt: .error)
        var broken = RecordingService(name: "B", journal: journal)
        broken.failure = .throwInPrepare
        let group = ServiceGroup(
            services: [
                RecordingService(name: "A", journal: journal), broken,
                RecordingService(name: "C", journal: journal),
            ],
            logger: Logger(sink: sink))
        await #expect(throws: Breakdown.self) {
            try await group.run(until: { await Task.waitUntilCancelled() })
        }
        #expect(!journal.contains("prepare C"))
        #expect(!journal.contains("run B"))
        #expect(journal.entries(starting: "stopped") == ["stopped A"])
        #expect(sink.capturedText.contains("service failed to start"))
    }

    @Test func aResourceStopsOutsideTheCancellationThatStopsIt() async throws {
        let journal = Journal()
        let resource = ResourceService(
            "resource", start: { journal.add("start") },
            stop: {
                // A graceful stop sleeps while work drains: cancelled, its sleeps would end at once.
                journal.add(Task.isCancelled ? "stop (cancelled)" : "stop")
            })
        let group = ServiceGroup(services: [resource], logger: Logger(sink: LogSink(capturingAt: .error)))
        let running = Task { try await group.run(until: { await Task.waitUntilCancelled() }) }
        #expect(try await eventually(timeout: .seconds(30)) { journal.contains("start") } != nil)
        #expect(!journal.contains("stop"))
        running.cancel()
        try await running.value
        #expect(journal.entries(starting: "st") == ["start", "stop"])
    }
}

struct Breakdown: Error, CustomStringConvertible {
    var description: String { "the disk is on fire" }
}

/// What the services did, in order.
final class Journal: Sendable {
    private let lines = Mutex<[String]>([])

    func add(_ line: String) { lines.withLock { $0.append(line) } }

    func contains(_ line: String) -> Bool { lines.withLock { $0.contains(line) } }

    func entries(starting prefixes: String...) -> [String] {
        lines.withLock { $0.filter { line in prefixes.contains { line.hasPrefix($0) } } }
    }
}

/// Writes what happens to it in the journal; stops after a few suspensions, so a group that stopped the next
/// service without waiting would interleave the entries.
struct RecordingService: Service {
    enum Failure {
        case throwInPrepare
        /// Throws once service `name` runs (so every service has started).
        case throwAfterRunOf(String)
        case returnAfterRunOf(String)
    }

    let name: String
    let journal: Journal
    var failure: Failure?

    init(name: String, journal: Journal) {
        self.name = name
        self.journal = journal
    }

    func prepare() async throws {
        journal.add("prepare \(name)")
        for _ in 0..<5 { await Task.yield() }
        if case .throwInPrepare? = failure { throw Breakdown() }
        journal.add("prepared \(name)")
    }

    func run() async throws {
        journal.add("run \(name)")
        switch failure {
        case .throwAfterRunOf(let other)?:
            _ = try await eventually(timeout: .seconds(30)) { journal.contains("run \(other)") }
            throw Breakdown()
        case .returnAfterRunOf(let other)?:
            _ = try await eventually(timeout: .seconds(30)) { journal.contains("run \(other)") }
            return
        default:
            break
        }
        await Task.waitUntilCancelled()
        journal.add("cancelled \(name)")
        await withCancellationShield {
            for _ in 0..<5 { await Task.yield() }
        }
        journal.add("stopped \(name)")
    }
}
