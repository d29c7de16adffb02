import Foundation
import ParleyAuth
import ParleyHTTP
import ParleyPostgres

/// The messaging feature, assembled: services (shared by the REST routes here and the realtime gateway) and
/// the bus of committed changes.
public final class MessagingModule: Sendable {
    public let configuration: MessagingConfiguration
    public let events: MessagingEvents
    public let messages: MessageService
    public let conversations: ConversationService
    public let groups: GroupService
    public let sync: SyncService
    let authenticator: Authenticator

    /// `revokeWindow`: an app's own revoke window in seconds, when it set one.
    public init(configuration: MessagingConfiguration, database: PostgresClient, authenticator: Authenticator,
                revokeWindow: @escaping @Sendable (Int64) -> Int? = { _ in nil }) {
        self.configuration = configuration
        self.authenticator = authenticator
        let events = MessagingEvents()
        let messageRepository = MessageRepository(database: database)
        let defaultWindow = configuration.revokeWindowSeconds
        messages = MessageService(configuration: configuration, messages: messageRepository,
                                  batcher: SendBatcher(repository: messageRepository),
                                  validator: MessageContentValidator(configuration: configuration), events: events,
                                  revokeWindow: { revokeWindow($0) ?? defaultWindow }, now: { Date() })
        conversations = ConversationService(configuration: configuration,
                                            conversations: ConversationRepository(database: database),
                                            messages: messageRepository, events: events)
        groups = GroupService(configuration: configuration, database: database,
                              groups: GroupRepository(database: database), messages: messageRepository, events: events)
        sync = SyncService(repository: SyncRepository(database: database))
        self.events = events
    }

    public func register(on router: inout Router) {
        MessageController(authenticator: authenticator, service: messages).register(on: &router)
        ConversationController(authenticator: authenticator, service: conversations).register(on: &router)
        GroupController(authenticator: authenticator, service: groups).register(on: &router)
        SyncController(authenticator: authenticator, service: sync).register(on: &router)
    }

    public func stop() {
        events.finish()
    }
}
