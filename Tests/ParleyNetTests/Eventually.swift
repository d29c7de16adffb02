/// Polls `condition` every few milliseconds until it holds or `timeout` passes; true when it held. The timeout is
/// generous: in a full test run the other suites keep the cooperative pool busy for seconds at a time.
func eventually(timeout: Duration = .seconds(30), _ condition: () -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return condition()
}
