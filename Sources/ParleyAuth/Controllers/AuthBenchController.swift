import ParleyHTTP

/// Benchmark routes (PARLEY_DEV_ROUTES=1 only): the same tiny answer with and without token verification, so
/// `scripts/bench-auth` measures what authentication adds to a request.
struct AuthBenchController: Sendable {
    let services: AuthServices

    func register(on router: inout Router) {
        router.get(
            "/bench/auth-echo",
            services.authenticator.protect { _, _, principal in
                .ok(principal)
            })
        let fixed = Principal(appId: 1, userId: "u_benchmarkbenchmark", sessionId: "s_benchmarkbenchmarkbenc")
        router.get("/bench/echo") { _, _ in
            .ok(fixed)
        }
    }
}
