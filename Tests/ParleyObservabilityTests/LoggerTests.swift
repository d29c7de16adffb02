import Foundation
import ParleyObservability
import Testing

@Suite struct LoggerTests {
    @Test func linesAreValidJSONWithEscapedStrings() throws {
        let sink = LogSink(capturingAt: .debug)
        let logger = Logger(sink: sink, metadata: [("service", "parley")]).with("request_id", "r-1")
        let tricky = "quote \" backslash \\ newline \n tab \t bell \u{07} unicode é 🎉"
        logger.info("hello", ["text": .string(tricky), "n": 42, "ok": .bool(true)])
        let line = sink.capturedText
        #expect(line.hasSuffix("}\n"))
        #expect(line.contains(#"\u0007"#))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["text"] as? String == tricky)
        #expect(object["msg"] as? String == "hello")
        #expect(object["level"] as? String == "info")
        #expect(object["service"] as? String == "parley")
        #expect(object["request_id"] as? String == "r-1")
        #expect(object["n"] as? Int == 42)
        #expect((object["ts"] as? String)?.hasSuffix("Z") == true)
    }

    @Test func linesBelowTheLevelAreDropped() {
        let sink = LogSink(capturingAt: .warning)
        let logger = Logger(sink: sink)
        logger.info("quiet")
        logger.error("loud")
        #expect(!sink.capturedText.contains("quiet"))
        #expect(sink.capturedText.contains("loud"))
    }

    @Test func metricsRenderInPrometheusTextFormat() {
        let registry = MetricsRegistry()
        registry.counter("requests_total", help: "Requests.", labels: ["route"]).labels("/a\"b").increment(by: 3)
        let histogram = registry.histogram("latency_seconds", help: "Latency.", buckets: [0.1, 1]).labels()
        histogram.observe(0.05)
        histogram.observe(0.5)
        histogram.observe(5)
        let text = registry.render()
        #expect(text.contains("# TYPE requests_total counter"))
        #expect(text.contains(#"requests_total{route="/a\"b"} 3"#))
        #expect(text.contains(#"latency_seconds_bucket{le="0.1"} 1"#))
        #expect(text.contains(#"latency_seconds_bucket{le="1.0"} 2"#))
        #expect(text.contains(#"latency_seconds_bucket{le="+Inf"} 3"#))
        #expect(text.contains("latency_seconds_count 3"))
    }
}

@Suite struct LoggerFastPathTests {
    @Test func directFieldsProduceTheSameJSON() throws {
        let sink = LogSink(capturingAt: .debug)
        Logger(sink: sink, metadata: [("service", "parley")]).log(.info, "request") { line in
            line.field("path", string: "/a\"b")
            line.field("status", int: 200)
            line.field("negative", int: -12)
            line.field("max", int: Int.max)
        }
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(sink.capturedText.utf8)) as? [String: Any])
        #expect(object["msg"] as? String == "request")
        #expect(object["path"] as? String == "/a\"b")
        #expect(object["status"] as? Int == 200)
        #expect(object["negative"] as? Int == -12)
        #expect(object["max"] as? Int == Int.max)
        #expect(object["service"] as? String == "parley")
        #expect(object["level"] as? String == "info")
        // The cached-prefix timestamp has the same shape as the slow path's, and is now.
        let ts = try #require(object["ts"] as? String)
        #expect(ts.range(of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"#, options: .regularExpression) != nil)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let date = try #require(formatter.date(from: ts))
        #expect(abs(date.timeIntervalSinceNow) < 60)
    }
}
