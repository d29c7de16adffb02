/// Background work with a lifetime: a listener, a periodic job, a server's sockets, a client's connections.
///
/// A `ServiceGroup` starts its services in order and stops them in reverse. Starting a service is `prepare()`
/// (what the services after it rely on: state loaded, a port bound), then `run()` in a task of its own.
/// Stopping it is cancelling that task: `run()` then finishes its own clean-up and returns. A service needs no
/// `start`/`stop` pair and no task handles of its own.
public protocol Service: Sendable {
    /// How the log names this service.
    var name: String { get }

    /// What must be done before the services after this one start. Throwing stops the group's start-up (the
    /// services already running are stopped in reverse order); a service undoes its own partial preparation.
    func prepare() async throws

    /// The work, until the task is cancelled; returns promptly then. Throwing or returning before the group asks
    /// the service to stop is a failure: the group logs it and stops every service.
    func run() async throws
}

extension Service {
    public var name: String { String(describing: Self.self) }

    public func prepare() async throws {}
}
