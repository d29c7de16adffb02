/// The kinds of message Parley stores; structured ones are validated by messaging's `MessageContentValidator`.
public enum MessageType: String, Sendable, Hashable, Codable, CaseIterable {
    case text, image, video, audio, file, custom, location, notify, richText, callAudio, callVideo, forward

    /// "audio" or "video" for a call (push rings invitations of these through VoIP), nil for anything else.
    public var callMedia: String? {
        switch self {
        case .callAudio: "audio"
        case .callVideo: "video"
        default: nil
        }
    }
}
