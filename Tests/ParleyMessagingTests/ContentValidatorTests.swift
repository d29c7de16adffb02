import Foundation
import ParleyHTTP
import ParleyJSON
import ParleyLiveSupport
import ParleyMessageModel
import Testing

@testable import ParleyMessaging

/// The content rules of every message type, without a server.
struct ContentValidatorTests {
    let validator = MessageContentValidator(configuration: MessagingConfiguration())

    func accepts(_ type: MessageType, _ content: JSONValue) -> Bool {
        (try? validator.validate(type, content)) != nil
    }

    @Test func acceptsWellFormedContentOfEveryType() throws {
        #expect(accepts(.text, "hi"))
        #expect(accepts(.richText, ["text": "hi", "spans": [["bold": true]]]))
        #expect(accepts(.image, ["objectKey": "a/b.jpg", "width": 640, "height": 480]))
        // Seed 004: a resized UIImage's size in points (CGFloat).
        #expect(accepts(.image, ["objectKey": "a/b.jpg", "width": 640, "height": 853.3333333333334]))
        #expect(
            accepts(
                .image, ["objectKey": "a/b.jpg", "width": 640, "height": 480, "thumbnailObjectKey": "t.jpg", "size": 1])
        )
        #expect(accepts(.video, ["objectKey": "v.mp4", "durationSec": 12.5, "coverObjectKey": "c.jpg"]))
        #expect(accepts(.audio, ["objectKey": "a.m4a", "durationSec": 3]))
        #expect(accepts(.file, ["objectKey": "f", "name": "report.pdf", "size": 0]))
        #expect(accepts(.location, ["lat": -33.86, "lng": 151.2, "name": "Sydney"]))
        #expect(accepts(.custom, ["anything": [1, 2, 3]]))
        #expect(accepts(.custom, "a bare string"))
        #expect(accepts(.callAudio, ["durationSec": 60, "status": "ended"]))
        #expect(accepts(.callVideo, [:]))
        #expect(
            accepts(
                .forward,
                [
                    "messages": [
                        ["msgType": "text", "content": "a"],
                        ["msgType": "image", "content": ["objectKey": "k", "width": 1, "height": 1]],
                    ]
                ]))
    }

    @Test func refusesMalformedContent() {
        #expect(!accepts(.text, 5))
        #expect(!accepts(.text, ""))
        #expect(!accepts(.text, .string(String(repeating: "é", count: 10_001))))
        #expect(accepts(.text, .string(String(repeating: "é", count: 10_000))))
        #expect(!accepts(.richText, "plain"))
        #expect(!accepts(.image, ["objectKey": "", "width": 1, "height": 1]))
        #expect(!accepts(.image, ["objectKey": "k\u{E9}", "width": 1, "height": 1])) // object keys are printable ASCII
        #expect(!accepts(.image, ["objectKey": "k", "width": 1, "height": 100_001]))
        #expect(!accepts(.video, ["objectKey": "k", "durationSec": "10"]))
        #expect(!accepts(.audio, ["durationSec": 1]))
        #expect(!accepts(.file, ["objectKey": "k", "name": "", "size": 1]))
        #expect(!accepts(.file, ["objectKey": "k", "name": "n", "size": -1]))
        #expect(!accepts(.location, ["lat": 0, "lng": 180.5]))
        #expect(!accepts(.image, ["objectKey": "a/b.jpg", "width": 0.5, "height": 480]))
        #expect(!accepts(.image, ["objectKey": "a/b.jpg", "width": 100_000.5, "height": 480]))
        #expect(!accepts(.location, ["lat": 0]))
        #expect(!accepts(.location, ["lat": 0, "lng": 0, "name": 7]))
        #expect(!accepts(.callAudio, ["status": ""]))
        #expect(!accepts(.forward, ["messages": "no"]))
        #expect(
            !accepts(.forward, ["messages": .array(Array(repeating: ["msgType": "text", "content": "a"], count: 51))]))
        #expect(!accepts(.forward, ["messages": [["msgType": "notify", "content": [:]]]]))
        #expect(!accepts(.notify, ["event": "x"]))
        #expect(!accepts(.custom, .string(String(repeating: "x", count: 16 * 1024))))
    }

    @Test func extraIsBoundedAndNullMeansNone() throws {
        #expect(try validator.validateExtra(nil) == nil)
        #expect(try validator.validateExtra(.null) == nil)
        #expect(try validator.validateExtra(["a": 1]) == Array(#"{"a":1}"#.utf8))
        #expect(throws: APIError.self) { try validator.validateExtra(.string(String(repeating: "x", count: 4096))) }
    }

    @Test func previewsAreTypeAware() {
        #expect(MessagePreview.text(type: .text, content: "  hello\n\n world ", revoked: false) == "hello world")
        #expect(MessagePreview.text(type: .text, content: "x", revoked: true) == "message revoked")
        #expect(MessagePreview.text(type: .image, content: [:], revoked: false) == "[image]")
        #expect(MessagePreview.text(type: .audio, content: [:], revoked: false) == "[voice]")
        #expect(MessagePreview.text(type: .file, content: [:], revoked: false) == "[file]")
        #expect(MessagePreview.text(type: .richText, content: ["text": "rich"], revoked: false) == "rich")
        let long = MessagePreview.text(
            type: .text, content: .string(String(repeating: "a", count: 500)), revoked: false)
        #expect(long.count == 101 && long.hasSuffix("…"))
    }

    @Test func conversationIDsAreStableAndParse() {
        #expect(ConversationID.single("bob", "alice") == "si:alice:bob")
        #expect(ConversationID.single("alice", "bob") == "si:alice:bob")
        #expect(ConversationID.single("a_b", "c") != ConversationID.single("a", "b_c"))
        #expect(ConversationID.parse("si:alice:bob")?.chatType == .single)
        #expect(ConversationID.parse("si:bob:alice") == nil) // not the canonical order
        #expect(ConversationID.parse("sg:g_1")?.parts == ["g_1"])
        #expect(ConversationID.parse("sg:") == nil)
        #expect(ConversationID.parse("xx:a:b") == nil)
        #expect(ConversationID.parse("si:a:b:c") == nil)
        // The byte scan keeps every rule of the id: both ids valid, the lower first, one colon between them.
        #expect(ConversationID.parse("si:alice:alice")?.parts == ["alice", "alice"])
        #expect(ConversationID.singleMembers("si:alice:alice") == ["alice"])
        #expect(ConversationID.singleMembers("si:alice:bob") == ["alice", "bob"])
        #expect(ConversationID.singleMembers("sg:g_1") == nil)
        for bad in [
            "", "si", "si:", "si::", "si:a:", "si::b", "si:a b:c", "si:a:b c", "Si:a:b", "sx:a:b", "sg:a:b",
            "sg:a b", "si:\(String(repeating: "a", count: 65)):b", "si:A:a:", "si:b:a",
        ] {
            #expect(ConversationID.parse(bad) == nil, "\(bad)")
        }
        #expect(ConversationID.parse("si:A:a")?.parts == ["A", "a"]) // byte order: uppercase sorts first
        #expect(ConversationID.parse("si:\(String(repeating: "a", count: 64)):b")?.chatType == .single)
        #expect(ConversationID.parse("si:" + String(repeating: "a", count: 140)) == nil)
    }

    @Test func cursorsRoundTripAndRejectGarbage() {
        #expect(SyncCursor("123-45") == SyncCursor(xid: 123, position: 45))
        #expect(SyncCursor(xid: 7, position: 0).description == "7-0")
        for bad in [
            "", "1", "a-1", "1-b", "1-2-3", "+1-2", "1--2", "99999999999999999999-1",
            "1234567890123456789-1", "1-1234567890123456789",
        ] {
            #expect(SyncCursor(bad) == nil, "\(bad)")
        }
        // openapi.yaml's pattern: 1-18 digits each, leading zeros allowed.
        #expect(
            SyncCursor("999999999999999999-000000000000000001") == SyncCursor(xid: 999_999_999_999_999_999, position: 1)
        )
    }
}

/// What clients see of a message, byte for byte (the send answer, the realtime frame, history and sync alike): the
/// wire of seed 001's `ImMessage` (content a string, extra a string or null, editedAt epoch milliseconds).
struct MessageJSONTests {
    static let base = IMMessage(
        id: "42", conversationId: "si:a:b", seq: 7, fromId: "a", toId: "b", chatType: .single,
        msgType: .image, content: try! JSONValue.parse(#"{"width":10,"objectKey":"k/ü","ratio":1.50}"#),
        extra: ["k": [1, 2.5, nil], "b": "hi \"there\"\n"], clientMsgId: "c-1", revoked: false, revokedBy: nil,
        createdAt: Date(timeIntervalSince1970: 1_764_000_000.125), editedAt: nil)

    /// Every variation of the fields whose wire form differs from storage.
    static var variations: [IMMessage] {
        var text = base
        text.msgType = .text
        text.content = "line one\nline \"two\" \\ / \u{1} ü 🎉"
        text.extra = "a plain \"string\""
        text.clientMsgId = nil
        text.editedAt = Date(timeIntervalSince1970: 1_764_000_100.987654)
        var customString = base
        customString.msgType = .custom
        customString.content = "just words"
        customString.extra = nil
        var customArray = base
        customArray.msgType = .custom
        customArray.content = [1, "two", ["three": nil]]
        customArray.extra = try! JSONValue.parse("12.50")
        var revoked = base
        revoked.revoked = true
        revoked.revokedBy = "a"
        revoked.content = .null
        revoked.extra = nil
        return [base, text, customString, customArray, revoked]
    }

    @Test func messageJSONIsWhatClientsSee() throws {
        #expect(
            String(decoding: Self.base.jsonBytes(), as: UTF8.self) == #"{"chatType":"single","clientMsgId":"c-1","#
                + #""content":"{\"width\":10,\"objectKey\":\"k/ü\",\"ratio\":1.50}","conversationId":"si:a:b","#
                + #""createdAt":"2025-11-24T16:00:00.125Z","editedAt":null,"#
                + #""extra":"{\"k\":[1,2.5,null],\"b\":\"hi \\\"there\\\"\\n\"}","#
                + #""fromId":"a","id":"42","msgType":"image","revoked":false,"revokedBy":null,"seq":7,"toId":"b"}"#)
        var revoked = Self.base
        revoked.revoked = true
        revoked.revokedBy = "a"
        revoked.content = .null
        revoked.extra = nil
        revoked.clientMsgId = nil
        revoked.editedAt = Date(timeIntervalSince1970: 1_764_000_100.0129)
        #expect(
            String(decoding: revoked.jsonBytes(), as: UTF8.self) == #"{"chatType":"single","clientMsgId":null,"#
                + #""content":"","conversationId":"si:a:b","createdAt":"2025-11-24T16:00:00.125Z","#
                + #""editedAt":1764000100012,"extra":null,"fromId":"a","id":"42","msgType":"image","#
                + #""revoked":true,"revokedBy":"a","seq":7,"toId":"b"}"#)
    }

    /// The fast writer (JSONBytesEncoder) and Foundation's JSONEncoder, configured as `JSONCoding.encoder`, write the
    /// same bytes for every variation.
    @Test func fastWriterWritesWhatFoundationWrites() throws {
        for message in Self.variations {
            let foundation = try Array(JSONCoding.encoder.encode(message))
            #expect(
                String(decoding: message.jsonBytes(), as: UTF8.self) == String(decoding: foundation, as: UTF8.self))
            #expect(message.jsonBytes() == foundation)
        }
    }

    /// Seed 001's `ImMessage` decodes every variation; structured content comes back as its JSON text.
    @Test func theSeedDecoderReadsEveryVariation() throws {
        for message in Self.variations {
            let decoded = try SeedImMessage.decode(bytes: message.jsonBytes())
            #expect(decoded.id == message.id && decoded.revoked == message.revoked)
            #expect(decoded.content == message.wireContent)
            #expect(decoded.extra == message.wireExtra)
            #expect(decoded.editedAt == message.editedAtMilliseconds)
        }
        let image = try SeedImMessage.decode(bytes: Self.base.jsonBytes())
        #expect(try JSONValue.parse(image.content) == Self.base.content)
        #expect(try SeedImMessage.decode(bytes: Self.variations[3].jsonBytes()).extra == "12.50")
        #expect(try SeedImMessage.decode(bytes: Self.variations[4].jsonBytes()).content == "")
    }

    /// Seed 001 sends `content` as a `String`: for structured types it holds the JSON document, which is then checked
    /// exactly like the object form; bad JSON text is 1002 naming `content`.
    @Test func contentAsAStringIsTheDocumentItHolds() throws {
        let validator = MessageContentValidator(configuration: MessagingConfiguration())
        let image: JSONValue = .string(#"{"objectKey":"k","width":16,"height":9}"#)
        let parsed = try MessageContentInput.value(.image, image)
        #expect(parsed == (try JSONValue.parse(#"{"objectKey":"k","width":16,"height":9}"#)))
        #expect(try validator.validate(.image, parsed) == Array(#"{"objectKey":"k","width":16,"height":9}"#.utf8))
        // The same rules as the object form: a missing height is refused either way.
        let noHeight = try MessageContentInput.value(.image, .string(#"{"objectKey":"k","width":16}"#))
        #expect(throws: APIError.self) { try validator.validate(.image, noHeight) }
        for bad in [#"{"objectKey":"k","#, "not json", "", #"{"a":1} trailing"#, String(repeating: "[", count: 80)] {
            do {
                _ = try MessageContentInput.value(.image, .string(bad))
                Issue.record("accepted \(bad)")
            } catch {
                #expect(error.code == 1002 && error.message.contains("`content`"), "\(bad)")
            }
        }
        // Text stays the text, whatever it looks like.
        #expect(try MessageContentInput.value(.text, #"{"a":1}"#) == #"{"a":1}"#)
        // Custom: a JSON object or array inside the string is stored as JSON, any other string as the string.
        #expect(try MessageContentInput.value(.custom, #"{"type":"image","object_key":"k"}"#).objectValue != nil)
        #expect(try MessageContentInput.value(.custom, "[1,2]") == [1, 2])
        #expect(try MessageContentInput.value(.custom, "42") == "42")
        #expect(try MessageContentInput.value(.custom, "{broken") == "{broken")
        #expect(try MessageContentInput.value(.custom, ["already": true]) == ["already": true])
    }

    @Test func aSendWithoutClientMsgIdIsAccepted() throws {
        let request = try MessageService.SendRequest.parse(
            Array(#"{"toId":"b","chatType":"single","msgType":"image","content":"{\"objectKey\":\"k\"}"}"#.utf8))
        #expect(request.clientMsgId == nil && request.content == .string(#"{"objectKey":"k"}"#))
        #expect(
            try MessageService.SendRequest.parse(
                Array(#"{"toId":"b","chatType":"single","msgType":"text","content":"x","clientMsgId":null}"#.utf8)
            ).clientMsgId == nil)
        do {
            _ = try MessageService.SendRequest.parse(
                Array(#"{"toId":"b","chatType":"single","msgType":"text","content":"x","clientMsgId":7}"#.utf8))
            Issue.record("accepted a number clientMsgId")
        } catch {
            #expect(error.code == 1002 && error.message.contains("clientMsgId"))
        }
    }

    @Test func sendRequestParsingNamesTheField() throws {
        let ok = try MessageService.SendRequest.parse(
            Array(#"{"toId":"b","chatType":"single","msgType":"text","content":"x","clientMsgId":"c"}"#.utf8))
        #expect(ok.toId == "b" && ok.content == "x" && ok.extra == nil)
        #expect(throws: APIError.invalidJSON) { try MessageService.SendRequest.parse(Array("{".utf8)) }
        do {
            _ = try MessageService.SendRequest.parse(Array(#"{"toId":1}"#.utf8))
            Issue.record("accepted a number toId")
        } catch {
            #expect(error.code == 1002 && error.message.contains("toId"))
        }
    }
}
