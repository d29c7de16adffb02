import ParleyLifecycle
import ParleyObservability
import ParleyPostgres
import Synchronization

/// Makes this instance its deployment's coordinator while it holds the coordinator lock, a session advisory lock in
/// the database the instances share: one instance at a time runs the deployment's upkeep (sweeps, prunes) and
/// watches its idle queues, so each further instance adds no polling of its own. When the holder stops or dies its
/// session ends, and another instance takes the lock within `PostgresConfiguration.sessionLockRetryInterval`.
struct DeploymentCoordinator: Service {
    /// "parleyco" in ASCII; the migrator's lock is "parley".
    static let lockKey: Int64 = 0x7061_726C_6579_636F

    let name = "deployment coordinator"
    let role: CoordinatorRole
    private let holds: Flag
    private let database: PostgresClient
    private let logger: Logger

    private final class Flag: Sendable {
        let value = Atomic<Bool>(false)
    }

    init(database: PostgresClient, logger: Logger, metrics: MetricsRegistry) {
        let holds = Flag()
        self.holds = holds
        self.database = database
        self.logger = logger.with("component", "coordinator")
        role = CoordinatorRole { holds.value.load(ordering: .relaxed) }
        metrics.gaugeFunction(
            "parley_coordinator", help: "1 while this instance runs the deployment's upkeep, else 0."
        ) {
            [([:], holds.value.load(ordering: .relaxed) ? 1 : 0)]
        }
    }

    func run() async {
        for await event in database.sessionLock(Self.lockKey) {
            switch event {
            case .acquired:
                holds.value.store(true, ordering: .relaxed)
                logger.info("this instance coordinates the deployment's upkeep")
            case .lost:
                holds.value.store(false, ordering: .relaxed)
                logger.warning("coordinator lock lost with the database session; trying again after reconnecting")
            }
        }
        holds.value.store(false, ordering: .relaxed)
    }
}
