/// The end of a mode: `status=ok`, or `status=fail` with every failed check on a `failure=` line (and on stderr).
enum Report {
    static func verdict(_ failures: [String]) -> Bool {
        Console.result("cpu_s", ProcessStatus.cpuSeconds(), decimals: 2)
        if failures.isEmpty {
            Console.result("status", "ok")
            return true
        }
        Console.result("status", "fail")
        for failure in failures {
            Console.result("failure", failure)
            Console.log("FAILED: \(failure)")
        }
        return false
    }
}
