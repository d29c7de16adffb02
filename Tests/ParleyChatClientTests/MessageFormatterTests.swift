import ParleyChatClient
import ParleyJSON
import Testing

/// How messages print, conversation ids, and image sizes: the pure parts of the chat client.
@Suite struct MessageFormatterTests {
    private func message(_ msgType: String, _ content: JSONValue, revoked: Bool = false, edited: Bool = false) throws
        -> ChatMessage
    {
        try ChatMessage(json: [
            "id": "1042", "conversationId": "si:u_a:u_b", "seq": 17, "fromId": "u_a", "toId": "u_b",
            "chatType": "single", "msgType": .string(msgType), "content": Self.wire(content), "extra": nil,
            "clientMsgId": "c-1", "revoked": .bool(revoked), "revokedBy": nil,
            "createdAt": "2026-12-01T05:10:01.123Z", "editedAt": edited ? 1_796_101_860_000 : nil,
        ])
    }

    /// The wire carries every content as a string: the text, or the JSON document as text (revoked: "").
    private static func wire(_ content: JSONValue) -> JSONValue {
        switch content {
        case .string: return content
        case .null: return ""
        default: return .string(content.serializedString)
        }
    }

    @Test func structuredContentArrivesAsItsJSONText() throws {
        let image = try message("image", ["objectKey": "k", "width": 640, "height": 480])
        #expect(image.content["width"] == 640)
        let customText = try ChatMessage(json: [
            "id": "1", "conversationId": "si:a:b", "seq": 1, "fromId": "a", "toId": "b", "chatType": "single",
            "msgType": "custom", "content": "not json", "revoked": false, "createdAt": "x", "editedAt": nil,
        ])
        #expect(customText.content == "not json")
        #expect(MessageFormatter.body(of: try message("text", #"{"a":1}"#)) == #"{"a":1}"#)
    }

    @Test func aLineNamesConversationSenderAndId() throws {
        #expect(
            MessageFormatter.line(label: "bob", sender: "alice", message: try message("text", "hi"))
                == "[bob] alice: hi  #1042")
    }

    @Test func describesEachKindOfContent() throws {
        let cases: [(String, JSONValue, String)] = [
            ("richText", ["text": "bold move", "spans": []], "bold move"),
            ("image", ["objectKey": "k", "width": 640, "height": 480], "[image 640x480]"),
            ("file", ["objectKey": "k", "name": "report.pdf", "size": 1234], "[file report.pdf, 1234 bytes]"),
            ("video", ["objectKey": "k", "durationSec": 12.4], "[video 12s]"),
            ("audio", ["objectKey": "k", "durationSec": 3], "[voice 3s]"),
            ("location", ["lat": 52.5, "lng": 13.4, "name": "Berlin"], "[location Berlin 52.5,13.4]"),
            ("callVideo", ["status": "missed"], "[video call missed]"),
            (
                "forward", ["messages": [["msgType": "text", "content": "a"], ["msgType": "text", "content": "b"]]],
                "[2 forwarded messages]"
            ),
            ("notify", ["event": "member_added"], "[group: member added]"),
            ("custom", ["anything": true], "[custom message]"),
        ]
        for (type, content, expected) in cases {
            #expect(MessageFormatter.body(of: try message(type, content)) == expected, "\(type)")
        }
    }

    @Test func revokedAndEditedMessagesSaySo() throws {
        #expect(MessageFormatter.body(of: try message("text", nil, revoked: true)) == "(revoked)")
        #expect(MessageFormatter.body(of: try message("text", "fixed", edited: true)) == "fixed (edited)")
    }

    @Test func textFromOthersCannotDriveTheTerminal() throws {
        let hostile = "hi\u{1B}]0;pwned\u{07}\u{1B}[2J\rfake line\nsecond\u{202E}txt.exe"
        let printed = MessageFormatter.body(of: try message("text", .string(hostile)))
        #expect(!printed.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || $0.value == 0x202E })
        #expect(printed.contains("⏎ second"))
    }

    @Test func aMessageWithoutItsRequiredFieldsIsRefused() {
        #expect(throws: ParleyAPIError.self) { try ChatMessage(json: ["id": "1", "conversationId": "si:a:b"]) }
    }

    @Test func conversationIdsFollowByteOrder() {
        #expect(ConversationID.single("u_b", "u_a") == "si:u_a:u_b")
        #expect(ConversationID.single("u_a", "u_b") == "si:u_a:u_b")
        #expect(ConversationID.single("Z", "a") == "si:Z:a") // uppercase sorts first in bytes
        #expect(ConversationID.single("me", "me") == "si:me:me")
        #expect(ConversationID.group("g_x") == "sg:g_x")
        #expect(ConversationID.peer(of: "si:u_a:u_b", me: "u_b") == "u_a")
        #expect(ConversationID.peer(of: "si:u_a:u_b", me: "u_a") == "u_b")
        #expect(ConversationID.peer(of: "si:me:me", me: "me") == "me")
        #expect(ConversationID.peer(of: "si:u_a:u_b", me: "u_c") == nil)
        #expect(ConversationID.peer(of: "sg:g_x", me: "u_a") == nil)
        #expect(ConversationID.groupId(of: "sg:g_x") == "g_x")
        #expect(ConversationID.groupId(of: "si:a:b") == nil)
    }

    @Test func readsTheSizeOfPNGGIFAndJPEG() {
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
        png += [0, 0, 0x02, 0x4C, 0, 0, 0, 0xF2, 8, 6, 0, 0, 0]
        #expect(ImageDimensions.of(png)! == (588, 242))

        let gif: [UInt8] = Array("GIF89a".utf8) + [0x40, 0x01, 0xF0, 0x00, 0, 0, 0]
        #expect(ImageDimensions.of(gif)! == (320, 240))

        // SOI, an APP0 segment of 16 bytes, then SOF0: length 17, precision 8, height 480, width 640.
        var jpeg: [UInt8] =
            [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0] + [UInt8](repeating: 0, count: 9)
        jpeg += [0xFF, 0xC0, 0x00, 0x11, 0x08, 0x01, 0xE0, 0x02, 0x80, 0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        #expect(ImageDimensions.of(jpeg)! == (640, 480))
    }

    @Test func otherBytesHaveNoImageSize() {
        #expect(ImageDimensions.of(Array("plain text".utf8)) == nil)
        #expect(ImageDimensions.of([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) == nil) // truncated PNG
        #expect(ImageDimensions.of([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x01, 0, 0, 0, 0, 0, 0]) == nil) // broken segment
        #expect(ImageDimensions.of(Array("GIF89a".utf8) + [0, 0, 0, 0]) == nil) // zero width
        #expect(ImageDimensions.of([]) == nil)
    }
}
