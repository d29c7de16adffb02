import Glibc

/// Runs blocking work on plain threads: the setup logins wait on sockets, and Swift's cooperative pool (one
/// thread per core here) must not be blocked by them.
enum Workers {
    private final class Job {
        let index: Int
        let body: @Sendable (Int) -> Void
        init(index: Int, body: @escaping @Sendable (Int) -> Void) {
            self.index = index
            self.body = body
        }
    }

    /// Calls `body(0..<count)`, each on its own thread, and returns when all have returned.
    static func run(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        var threads: [pthread_t] = []
        for index in 0..<count {
            let job = Unmanaged.passRetained(Job(index: index, body: body)).toOpaque()
            var thread = pthread_t()
            let rc = pthread_create(
                &thread, nil,
                { raw in
                    let job = Unmanaged<Job>.fromOpaque(raw!).takeRetainedValue()
                    job.body(job.index)
                    return nil
                }, job)
            precondition(rc == 0, "pthread_create failed: \(rc)")
            threads.append(thread)
        }
        for thread in threads { pthread_join(thread, nil) }
    }
}
