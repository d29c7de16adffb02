/// One line typed (or piped) into `parley chat`. Pure parsing; `ChatSession` carries the commands out.
public enum ChatCommand: Sendable, Equatable {
    case help
    /// The conversation list with unread counts.
    case list
    case open(ConversationTarget)
    /// The last `limit` messages of the open conversation.
    case history(limit: Int)
    /// Text for the open conversation (a plain line; `//x` sends `/x`).
    case send(String)
    /// Upload a file and send it as a file or image message to the open conversation.
    case upload(path: String)
    /// Revoke a message by id; nil: the last message this session sent.
    case revoke(messageId: String?)
    /// Replace the text of a message (`/edit #ID text`); nil: the last message this session sent.
    case edit(messageId: String?, text: String)
    /// Who this session is logged in as.
    case whoami
    case quit

    public static let helpText = """
        commands:
          /list                  conversations with unread counts (numbered for /open)
          /open TARGET           open a conversation: a user id (u_...), a group (g_...), si:A:B / sg:G, or a /list number
          /history [N]           the last N messages of the open conversation (default 20)
          TEXT                   send TEXT to the open conversation (start with // to send a line beginning with /)
          /upload PATH           upload a file, send it to the open conversation, print its signed URL
          /revoke [MSG_ID]       revoke a message (default: your last one in this session)
          /edit [#MSG_ID] TEXT   change the text of a message (default: your last one)
          /whoami                your user id
          /help                  this text
          /quit                  leave (Ctrl-D too)
        """

    /// nil for a blank line; throws for an unknown command or bad arguments.
    public static func parse(_ line: String) throws(ChatUsageError) -> ChatCommand? {
        let trimmed = line.trimmingWhitespace()
        guard !trimmed.isEmpty else { return nil }
        if trimmed.hasPrefix("//") { return .send(String(trimmed.dropFirst())) }
        guard trimmed.hasPrefix("/") else { return .send(trimmed) }

        let name: String
        let rest: String
        if let space = trimmed.firstIndex(where: \.isWhitespace) {
            name = String(trimmed[..<space])
            rest = trimmed[space...].trimmingWhitespace()
        } else {
            name = trimmed
            rest = ""
        }
        func noArguments(_ command: ChatCommand) throws(ChatUsageError) -> ChatCommand {
            guard rest.isEmpty else { throw ChatUsageError("\(name) takes no arguments") }
            return command
        }
        switch name {
        case "/help", "/?":
            return try noArguments(.help)
        case "/list", "/ls":
            return try noArguments(.list)
        case "/whoami":
            return try noArguments(.whoami)
        case "/quit", "/exit", "/q":
            return try noArguments(.quit)
        case "/open":
            guard !rest.isEmpty else {
                throw ChatUsageError("/open needs a target (a user id, g_GROUP, or a /list number)")
            }
            return .open(try ConversationTarget(parsing: rest))
        case "/history":
            guard !rest.isEmpty else { return .history(limit: 20) }
            guard let limit = Int(rest), (1...100).contains(limit) else {
                throw ChatUsageError("/history takes a count from 1 to 100")
            }
            return .history(limit: limit)
        case "/upload":
            guard !rest.isEmpty else { throw ChatUsageError("/upload needs a file path") }
            return .upload(path: rest)
        case "/revoke":
            if rest.isEmpty { return .revoke(messageId: nil) }
            guard let id = messageId(rest) else {
                throw ChatUsageError("/revoke takes a message id, e.g. /revoke 1042")
            }
            return .revoke(messageId: id)
        case "/edit":
            let words = rest.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard let first = words.first else { throw ChatUsageError("/edit needs the new text") }
            // Only `#1042` names a message: `/edit 3 apples` is the text "3 apples".
            if first.hasPrefix("#"), let id = messageId(String(first)), words.count == 2 {
                return .edit(messageId: id, text: words[1].trimmingWhitespace())
            }
            return .edit(messageId: nil, text: rest)
        default:
            throw ChatUsageError("unknown command \(name) (/help lists the commands)")
        }
    }

    /// Message ids are 64-bit numbers sent as decimal strings; the chat prints them as `#1042`.
    static func messageId(_ text: String) -> String? {
        let digits = text.hasPrefix("#") ? text.dropFirst() : Substring(text)
        guard (1...19).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }),
            UInt64(digits) != nil
        else { return nil }
        return String(digits)
    }
}
