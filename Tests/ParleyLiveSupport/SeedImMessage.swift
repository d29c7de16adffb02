import Foundation

/// Seed 001's `ImMessage` (the XuqmGroup iOS SDK), written exactly as its document declares it: a Swift `Decodable`
/// fails on any other type, so every message shape Parley hands out is decoded with it in the tests.
public struct SeedImMessage: Decodable, Sendable {
    public enum ChatType: String, Decodable, Sendable {
        case single, group
    }

    public enum MsgType: String, Decodable, Sendable {
        case text, image, video, audio, file, custom, location, notify, richText, callAudio, callVideo, forward
    }

    public let id: String
    public let fromId: String
    public let toId: String
    public let chatType: ChatType
    public let msgType: MsgType
    public let content: String
    public let extra: String?
    public let revoked: Bool
    public let createdAt: String
    public let editedAt: Int64?

    /// Decodes `json` (a message as `JSONSerialization` gave it, or its bytes) with Foundation's plain decoder, as
    /// the SDK does.
    public static func decode(_ json: Any?) throws -> SeedImMessage {
        guard let json, JSONSerialization.isValidJSONObject(json) else {
            throw TestFailure("not a message object: \(String(describing: json))")
        }
        return try JSONDecoder().decode(Self.self, from: JSONSerialization.data(withJSONObject: json))
    }

    public static func decode(bytes: [UInt8]) throws -> SeedImMessage {
        try JSONDecoder().decode(Self.self, from: Data(bytes))
    }
}
