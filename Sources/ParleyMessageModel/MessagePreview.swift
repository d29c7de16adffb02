import ParleyJSON

/// The one-line preview of a conversation's last message, by type: text itself (trimmed, one line, at most
/// 100 characters), "[image]", "[voice]", ... and "message revoked". Also the body of push alerts (ParleyPush).
public enum MessagePreview {
    static let maxCharacters = 100

    public static func text(type: MessageType, content: JSONValue, revoked: Bool) -> String {
        if revoked { return "message revoked" }
        switch type {
        case .text: return shorten(content.stringValue ?? "")
        case .richText: return shorten(content["text"]?.stringValue ?? "")
        case .image: return "[image]"
        case .video: return "[video]"
        case .audio: return "[voice]"
        case .file: return "[file]"
        case .location: return "[location]"
        case .custom: return "[custom message]"
        case .notify: return "[notification]"
        case .callAudio: return "[voice call]"
        case .callVideo: return "[video call]"
        case .forward: return "[forwarded messages]"
        }
    }

    static func shorten(_ text: String) -> String {
        var line = ""
        line.reserveCapacity(min(text.utf8.count, 4 * maxCharacters))
        var count = 0
        var pendingSpace = false
        for character in text {
            if character.isWhitespace || character.isNewline {
                pendingSpace = !line.isEmpty
                continue
            }
            if pendingSpace {
                line.append(" ")
                count += 1
                pendingSpace = false
            }
            if count >= maxCharacters { line.append("…"); break }
            line.append(character)
            count += 1
        }
        return line
    }
}
