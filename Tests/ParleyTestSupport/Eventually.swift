/// The one way tests wait: polls `condition` every `interval` until it holds or `timeout` passes, and asks once
/// more at the deadline. Returns how long it took, or nil if it never held. Use it instead of a fixed sleep: the
/// wait ends as soon as the condition holds, and a loaded machine only makes it longer, not wrong.
///
/// ```swift
/// #expect(try await eventually { cache.count == 2 } != nil)
/// ```
@discardableResult
public func eventually(
    timeout: Duration = .seconds(10), interval: Duration = .milliseconds(10),
    _ condition: () async throws -> Bool
) async throws -> Duration? {
    let clock = ContinuousClock()
    let start = clock.now
    while clock.now - start < timeout {
        if try await condition() { return clock.now - start }
        try await Task.sleep(for: interval)
    }
    return try await condition() ? clock.now - start : nil
}
