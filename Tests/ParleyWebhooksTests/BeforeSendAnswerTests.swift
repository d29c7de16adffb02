import ParleyJSON
import Testing

@testable import ParleyWebhooks

@Suite struct BeforeSendAnswerTests {
    static func parse(_ text: String, status: Int = 200) -> BeforeSendAnswer {
        BeforeSendAnswer.parse(status: status, body: Array(text.utf8))
    }

    @Test func allowDenyAndReplace() throws {
        #expect(Self.parse(#"{"action":"allow"}"#) == .allow)
        #expect(
            Self.parse(#"{"action":"deny","code":4001,"message":"no swearing"}"#)
                == .deny(code: 4001, message: "no swearing"))
        #expect(Self.parse(#"{"action":"deny"}"#) == .deny(code: nil, message: nil))
        #expect(
            Self.parse(#"{"action":"allow","content":"***"}"#) == .replace(content: .string("***"), extra: nil))
        #expect(Self.parse(#"{"action":"allow","extra":null}"#) == .replace(content: nil, extra: .null))
        #expect(
            Self.parse(#"{"action":"allow","content":{"text":"x"},"extra":{"k":1}}"#)
                == .replace(
                    content: try JSONValue.parse(#"{"text":"x"}"#), extra: try JSONValue.parse(#"{"k":1}"#)))
    }

    @Test(arguments: [
        (200, "not json"), (200, "[]"), (200, #"{"action":"maybe"}"#), (200, #"{}"#),
        (200, #"{"action":"deny","code":"x"}"#), (200, #"{"action":"deny","code":1.5}"#),
        (200, #"{"action":"deny","message":7}"#), (200, #"{"action":"allow","content":null}"#),
        (500, #"{"action":"allow"}"#), (302, #"{"action":"allow"}"#), (404, ""),
    ])
    func anythingElseIsAFailure(_ status: Int, _ body: String) {
        guard case .invalid = Self.parse(body, status: status) else {
            Issue.record("\(status) \(body) was taken for an answer")
            return
        }
    }

    @Test func longBackendMessagesAreCut() {
        let long = String(repeating: "a", count: 5000)
        guard case .deny(_, let message?) = Self.parse(#"{"action":"deny","message":"\#(long)"}"#) else {
            Issue.record("not a deny")
            return
        }
        #expect(message.count == BeforeSendAnswer.maxMessageLength)
    }

    @Test func denialCarriesTheBackendsCodeAndMessage() throws {
        let error = APIErrorProbe.denied(code: 4001, message: "no swearing")
        #expect(error.code == 1600)
        #expect(error.status == 403)
        #expect(error.message == "no swearing")
        let data = try JSONValue.parse(error.data ?? [])
        #expect(data["backendCode"]?.int64Value == 4001)
        #expect(data["backendMessage"]?.stringValue == "no swearing")
    }
}
