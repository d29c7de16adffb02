import ParleyLiveSupport
import Testing

/// `/metrics` with `PARLEY_METRICS_TOKEN`: the scrape needs the token; health and readiness stay open.
@Suite struct OperationsRoutesTests {
    @Test func metricsNeedsTheConfiguredBearerToken() async throws {
        let token = "scrape-0123456789abcdef"
        try await withLiveApp(environment: ["PARLEY_METRICS_TOKEN": token]) { live in
            let client = live.client()
            #expect(try await client.get("/metrics").code == 1030)
            #expect(try await client.get("/metrics", token: "scrape-0123456789abcdeX").code == 1030)
            #expect(try await client.get("/metrics", token: String(token.dropLast())).code == 1030)
            let scrape = try await client.get("/metrics", token: token)
            #expect(scrape.status == 200)
            #expect(scrape.text.contains("parley_process_resident_memory_bytes"))
            #expect(try await client.get("/healthz").status == 200)
            #expect(try await client.get("/readyz").status == 200)
        }
    }

    @Test func metricsIsOpenWithoutAToken() async throws {
        try await withLiveApp { live in
            let scrape = try await live.client().get("/metrics")
            #expect(scrape.status == 200)
        }
    }
}
