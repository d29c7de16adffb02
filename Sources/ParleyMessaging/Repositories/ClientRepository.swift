import ParleyPostgres

/// A repository whose statements all go through one client. `on(_:)` is the same repository on another client:
/// the one `PostgresReadRouter.read` hands a lag-tolerant read (a caught-up replica, or the primary).
protocol ClientRepository: Sendable {
    var database: PostgresClient { get }
    init(database: PostgresClient)
}

extension ClientRepository {
    func on(_ database: PostgresClient) -> Self { Self(database: database) }
}

extension ConversationRepository: ClientRepository {}
extension MessageRepository: ClientRepository {}
extension InteractionRepository: ClientRepository {}
extension SyncRepository: ClientRepository {}
extension GroupRepository: ClientRepository {}
extension BlockRepository: ClientRepository {}
extension UserSearchRepository: ClientRepository {}
extension MessageSearchRepository: ClientRepository {}
extension FriendRepository: ClientRepository {}
extension ReadReceiptRepository: ClientRepository {}
