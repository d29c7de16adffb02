import ParleyJSON

/// The one-line preview of a conversation's last message, by type: text itself (trimmed, one line, at most
/// 100 characters), "[image]", "[voice]", ... and "message revoked", in English or Chinese. A custom message
/// whose content names a known `type` (seed 000's `{type: "image", object_key, ...}`) previews as that kind.
/// Also the body of push alerts (ParleyPush), in the recipient device's language.
public enum MessagePreview {
    static let maxCharacters = 100

    public static func text(
        type: MessageType, content: JSONValue, revoked: Bool, language: PreviewLanguage = .en
    ) -> String {
        if revoked { return Label.revoked.text(language) }
        switch type {
        case .text: return shorten(content.stringValue ?? "")
        case .richText: return shorten(content["text"]?.stringValue ?? "")
        case .image: return Label.image.text(language)
        case .video: return Label.video.text(language)
        case .audio: return Label.voice.text(language)
        case .file: return Label.file.text(language)
        case .location: return Label.location.text(language)
        case .custom: return (content["type"]?.stringValue.flatMap(Label.init(customType:)) ?? .custom).text(language)
        case .notify: return Label.notify.text(language)
        case .callAudio: return Label.voiceCall.text(language)
        case .callVideo: return Label.videoCall.text(language)
        case .forward: return Label.forward.text(language)
        }
    }

    /// The fixed previews.
    enum Label {
        case revoked, image, flashImage, images, video, voice, file, location, custom, notify, voiceCall, videoCall
        case forward

        /// The custom content `type`s apps use for media (seed 000's names among them); nil for any other.
        init?(customType: String) {
            switch customType {
            case "image": self = .image
            case "flash_image": self = .flashImage
            case "multi_image": self = .images
            case "audio", "voice": self = .voice
            case "video": self = .video
            case "file": self = .file
            case "location": self = .location
            default: return nil
            }
        }

        func text(_ language: PreviewLanguage) -> String {
            switch (self, language) {
            case (.revoked, .en): "message revoked"
            case (.revoked, .zh): "消息已撤回"
            case (.image, .en): "[image]"
            case (.image, .zh), (.images, .zh): "[图片]"
            case (.flashImage, .en): "[flash image]"
            case (.flashImage, .zh): "[闪照]"
            case (.images, .en): "[images]"
            case (.video, .en): "[video]"
            case (.video, .zh): "[视频]"
            case (.voice, .en): "[voice]"
            case (.voice, .zh): "[语音]"
            case (.file, .en): "[file]"
            case (.file, .zh): "[文件]"
            case (.location, .en): "[location]"
            case (.location, .zh): "[位置]"
            case (.custom, .en): "[custom message]"
            case (.custom, .zh): "[消息]"
            case (.notify, .en): "[notification]"
            case (.notify, .zh): "[通知]"
            case (.voiceCall, .en): "[voice call]"
            case (.voiceCall, .zh): "[语音通话]"
            case (.videoCall, .en): "[video call]"
            case (.videoCall, .zh): "[视频通话]"
            case (.forward, .en): "[forwarded messages]"
            case (.forward, .zh): "[聊天记录]"
            }
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
