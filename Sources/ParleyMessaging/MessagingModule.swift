import Foundation
import ParleyAuth
import ParleyHTTP
import ParleyLifecycle
import ParleyMessageModel
import ParleyNet
import ParleyObservability
import ParleyPostgres

/// The messaging feature, assembled: services (shared by the REST routes here and the realtime gateway) and
/// the bus of committed changes.
public final class MessagingModule: Sendable {
    public let configuration: MessagingConfiguration
    public let events: MessagingEvents
    public let messages: MessageService
    public let conversations: ConversationService
    /// Reactions, pins, delete for me.
    public let interactions: InteractionService
    /// Group read receipts: readers of a message, read counts to senders.
    public let readReceipts: ReadReceipts
    /// Keeps message search's index, off the send path.
    public let searchIndexer: MessageSearchIndexer
    public let groups: GroupService
    public let sync: SyncService
    public let reports: ReportService
    /// Social-graph events (friends, blocks, profiles): recorded for sync and published after commit.
    public let userEvents: UserEvents
    public let friends: FriendService
    public let blocks: BlockService
    /// The admin API's messages and its broadcast jobs.
    public let admin: AdminMessageService
    public let broadcastJobs: BroadcastJobs
    /// The records finished calls leave in conversations (ParleyCalls).
    public let callRecords: CallRecords
    let friendRepository: FriendRepository
    let blockRepository: BlockRepository
    let userSearch: UserSearchRepository
    let messageSearch: MessageSearchRepository
    let authenticator: Authenticator
    let syncRepository: SyncRepository
    /// Where lag-tolerant reads run (history, sync, lists, search): the primary unless replicas are configured.
    let reads: PostgresReadRouter
    let logger: Logger

    /// `revokeWindow`: an app's own revoke window in seconds, when it set one. `attachments`: the file service's
    /// check of the object keys a message references. `avatars`: its avatar check for group avatars. `beforeSend`: the
    /// app backend's check of user sends (the webhooks module's). `storedCounts`: where stored messages are counted for
    /// the admin API's statistics. `reads`: where lag-tolerant reads run (default: the primary, `database`).
    public init(
        configuration: MessagingConfiguration, database: PostgresClient, reads: PostgresReadRouter? = nil,
        authenticator: Authenticator,
        logger: Logger = Logger(sink: LogSink(capturingAt: .error)),
        revokeWindow: @escaping @Sendable (Int64) -> Int? = { _ in nil },
        attachments: AttachmentAuthorizer? = nil,
        avatars: AvatarAuthorizer? = nil, metrics: MetricsRegistry = MetricsRegistry(),
        beforeSend: BeforeSendHook? = nil, storedCounts: DailyMessageCounts? = nil
    ) {
        self.logger = logger.with("component", "messaging")
        self.configuration = configuration
        self.authenticator = authenticator
        let reads = reads ?? PostgresReadRouter(primary: database)
        self.reads = reads
        let events = MessagingEvents()
        let messageRepository = MessageRepository(database: database)
        let interactionRepository = InteractionRepository(database: database)
        let defaultWindow = configuration.revokeWindowSeconds
        messages = MessageService(
            configuration: configuration, messages: messageRepository, interactions: interactionRepository,
            batcher: SendBatcher(repository: messageRepository),
            validator: MessageContentValidator(configuration: configuration), events: events,
            revokeWindow: { revokeWindow($0) ?? defaultWindow }, now: { Date() },
            attachments: attachments, beforeSend: beforeSend,
            sendRate: TokenBucketLimiter(
                ratePerSecond: configuration.sendRatePerSecond, burst: configuration.sendBurst),
            refusals: QuotaRefusals(metrics: metrics), reads: reads, storedCounts: storedCounts)
        let readReceipts = ReadReceipts(
            repository: ReadReceiptRepository(database: database), messages: messages, events: events,
            reads: reads, logger: self.logger)
        self.readReceipts = readReceipts
        conversations = ConversationService(
            configuration: configuration,
            conversations: ConversationRepository(database: database),
            messages: messageRepository, interactions: interactionRepository, events: events, reads: reads,
            readMoved: { readReceipts.readMoved(appId: $0, conversationId: $1, from: $2, to: $3) })
        groups = GroupService(
            configuration: configuration, database: database,
            groups: GroupRepository(database: database), messages: messageRepository, events: events,
            avatars: avatars, reads: reads)
        reports = ReportService(
            reports: ReportRepository(database: database), messages: messages,
            groups: GroupRepository(database: database))
        syncRepository = SyncRepository(database: database)
        sync = SyncService(repository: syncRepository, reads: reads)
        let userEvents = UserEvents(events: events)
        self.userEvents = userEvents
        interactions = InteractionService(
            database: database, repository: interactionRepository,
            conversationEvents: ConversationEvents(events: events), userEvents: userEvents, reads: reads)
        let friendRepository = FriendRepository(database: database)
        let blockRepository = BlockRepository(database: database)
        self.friendRepository = friendRepository
        self.blockRepository = blockRepository
        let friends = FriendService(
            database: database, friends: friendRepository, blocks: blockRepository, userEvents: userEvents,
            maxFriends: configuration.maxFriends, reads: reads)
        self.friends = friends
        blocks = BlockService(
            database: database, friends: friendRepository, blocks: blockRepository, friendService: friends,
            userEvents: userEvents, maxBlocks: configuration.maxBlocks, reads: reads)
        userSearch = UserSearchRepository(database: database)
        messageSearch = MessageSearchRepository(database: database)
        searchIndexer = MessageSearchIndexer(database: database, logger: self.logger)
        self.events = events
        admin = AdminMessageService(
            database: database, messages: messageRepository, service: messages, events: events)
        broadcastJobs = BroadcastJobs(database: database, admin: admin)
        callRecords = CallRecords(messages: messageRepository, events: events, storedCounts: storedCounts)
    }

    /// The `profile` event auth records when a public profile changes (see `ProfileChangeRecorder`).
    public var profileChangeRecorder: ProfileChangeRecorder { ProfileEvents(userEvents: userEvents).recorder }

    public func register(on router: inout Router) {
        MessageController(authenticator: authenticator, service: messages).register(on: &router)
        ConversationController(authenticator: authenticator, service: conversations).register(on: &router)
        InteractionController(authenticator: authenticator, service: interactions, conversations: conversations)
            .register(on: &router)
        ReadReceiptController(authenticator: authenticator, receipts: readReceipts).register(on: &router)
        GroupController(authenticator: authenticator, service: groups).register(on: &router)
        SyncController(authenticator: authenticator, service: sync).register(on: &router)
        ReportController(authenticator: authenticator, service: reports).register(on: &router)
        SocialController(authenticator: authenticator, friends: friends, blocks: blocks).register(on: &router)
        UserSearchController(authenticator: authenticator, repository: userSearch, reads: reads).register(on: &router)
        MessageSearchController(
            authenticator: authenticator, repository: messageSearch, conversations: conversations, reads: reads
        )
        .register(on: &router)
    }

    /// The signed server-to-server routes of the app's backend (`/api/admin/messages`, `/api/admin/groups`,
    /// `/api/admin/reports`, ...).
    public func registerAdmin(on router: inout Router, auth: AuthModule) {
        AdminMessageController(auth: auth, service: admin, jobs: broadcastJobs).register(on: &router)
        AdminGroupController(auth: auth, service: groups).register(on: &router)
        AdminReportController(auth: auth, reports: reports.reports).register(on: &router)
    }

    /// What messaging runs while the server serves: the event bus (closed at the end); the upkeep of sync's change
    /// log (its xid ranges made ahead, and dropped past the retention) every `syncMaintenanceInterval` on the
    /// coordinator; the search indexer and the broadcast jobs, shared queues.
    public func backgroundServices(coordinator: CoordinatorRole) -> [any Service] {
        let events = events
        let logger = logger
        let jobs = broadcastJobs
        var services: [any Service] = [
            ResourceService("messaging events", stop: { events.finish() }),
            readReceipts.service,
            searchIndexer.service(coordinator: coordinator),
            // Broadcasts to every user: any instance takes a job whose lease is free (a second worker finds none).
            PeriodicService("broadcast jobs", every: .seconds(1), on: .sharedQueue(coordinator)) {
                do {
                    while try await jobs.runOnce() {}
                } catch {
                    logger.warning("broadcast job failed; retried", ["error": .string(String(describing: error))])
                }
            },
        ]
        let interval = configuration.syncMaintenanceInterval
        if interval > .zero {
            let repository = syncRepository
            let days = configuration.syncRetentionDays
            services.append(
                PeriodicService(
                    "sync change log", every: interval, firstAfter: .seconds(10), on: .coordinator(coordinator)
                ) {
                    do {
                        let done = try await repository.maintainChangeLog(retentionDays: days)
                        guard done != .none else { return }
                        logger.info(
                            "sync change log maintained",
                            [
                                "partitions_added": .int(done.partitionsAdded),
                                "partitions_dropped": .int(done.partitionsDropped),
                                "rows_deleted": .int(done.rowsDeleted),
                                "unpartitioned_dropped": .bool(done.unpartitionedDropped), "days": .int(days),
                            ])
                    } catch {
                        logger.warning(
                            "sync change log maintenance failed", ["error": .string(String(describing: error))])
                    }
                })
        }
        return services
    }
}
