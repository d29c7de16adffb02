import Foundation
import ParleyObservability
import Synchronization
import Testing

@Suite struct ConcurrentMetricsTests {
    /// Runs `body(thread)` on `threads` threads at once and waits for all of them.
    private func onThreads(_ threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for index in 0..<threads {
            group.enter()
            Thread {
                body(index)
                group.leave()
            }.start()
        }
        group.wait()
    }

    @Test func histogramCountsEveryObservationFromManyThreads() {
        let registry = MetricsRegistry()
        let family = registry.histogram("test_seconds", help: "test", labels: ["route"])
        let histogram = family.labels("/x")
        // Values chosen so that the sum is exact in binary floating point.
        onThreads(4) { thread in
            for index in 0..<10_000 { histogram.observe(index % 2 == 0 ? 0.0009765625 : 20) }
        }
        let text = registry.render()
        #expect(text.contains(#"test_seconds_count{route="/x"} 40000"#))
        #expect(text.contains(#"test_seconds_bucket{route="/x",le="+Inf"} 40000"#))
        #expect(text.contains(#"test_seconds_bucket{route="/x",le="0.001"} 20000"#))
        #expect(text.contains(#"test_seconds_bucket{route="/x",le="10.0"} 20000"#))
        #expect(text.contains(#"test_seconds_sum{route="/x"} 400019.53125"#))
    }
}
