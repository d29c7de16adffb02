import ParleyAuth
import ParleyHTTP
import ParleyJSON
import ParleyLifecycle
import ParleyMessaging
import ParleyObservability
import ParleyPostgres

/// Call signalling, assembled: the REST routes, the WebSocket frames (handed to the realtime gateway, which does not
/// know this module), the timeout sweep and the pruning of ended calls.
public final class CallsModule: Sendable {
    public let configuration: CallConfiguration
    public let service: CallService
    let authenticator: Authenticator
    let logger: Logger

    /// `notifier`: the offline push, queued in each transition's transaction.
    public init(
        configuration: CallConfiguration, database: PostgresClient, authenticator: Authenticator,
        messaging: MessagingModule, notifier: CallNotifier = .none, logger: Logger
    ) {
        self.configuration = configuration
        self.authenticator = authenticator
        let logger = logger.with("component", "calls")
        self.logger = logger
        service = CallService(
            database: database, repository: CallRepository(database: database), userEvents: messaging.userEvents,
            records: messaging.callRecords, notifier: notifier, logger: logger)
    }

    public func register(on router: inout Router) {
        CallController(authenticator: authenticator, service: service, configuration: configuration)
            .register(on: &router)
    }

    /// `call_invite`, `call_accept`, `call_reject`, `call_cancel`, `call_hangup`: the frame's data and the caller in,
    /// the ack's data out (or a thrown error, answered as an error frame).
    public var frameHandlers: [String: @Sendable (JSONObject, Principal) async throws -> [UInt8]] {
        CallFrames.handlers(service)
    }

    /// Calls' part in account deletion, for `AuthModule.accountDeletion(participants:)`: the user hangs up every call
    /// they ring in or are in. List it before messaging's part, which closes their 1:1 conversations (the calls'
    /// records go there first).
    public var accountDeletionParticipant: AccountDeletionParticipant {
        let service = service
        return AccountDeletionParticipant("calls") { appId, userId, connection in
            let afterCommit = try await service.endCalls(ofDeletedUser: userId, appId: appId, on: connection)
            // Auth's after-commit work is synchronous; the events are published and the notifier told in order.
            return { Task { await afterCommit() } }
        }
    }

    /// The sweep (every PARLEY_CALL_SWEEP_MS on the coordinator, now and then on the others: a call is decided by
    /// whoever locks it first) and hourly pruning of ended calls on the coordinator.
    public func backgroundServices(coordinator: CoordinatorRole) -> [any Service] {
        let service = service
        let logger = logger
        let retention = configuration.retentionHours
        var services: [any Service] = []
        if configuration.sweepInterval > .zero {
            services.append(
                PeriodicService("call timeouts", every: configuration.sweepInterval, on: .sharedQueue(coordinator)) {
                    do {
                        // Again at once while a run found a full page.
                        while try await service.sweepOnce() >= 100 {}
                    } catch {
                        logger.warning("call timeout sweep failed; retried", ["error": .string("\(error)")])
                    }
                })
        }
        services.append(
            PeriodicService(
                "call pruner", every: .seconds(3600), firstAfter: .seconds(60), on: .coordinator(coordinator)
            ) {
                do {
                    _ = try await service.prune(endedBeforeHours: retention)
                } catch {
                    logger.warning("pruning ended calls failed", ["error": .string("\(error)")])
                }
            })
        return services
    }
}
