import Foundation
import ParleyAuth
import ParleyJSON
import Testing

@testable import ParleyWebhooks

@Suite struct WebhookSigningTests {
    @Test func signatureIsTheInboundSchemeOverTheURLTarget() throws {
        let body = Array(#"{"event":"after_send"}"#.utf8)
        let url = try WebhookURL("https://backend.example.com:8443/hooks/parley?tenant=a%20b")
        #expect(url.target == "/hooks/parley?tenant=a%20b")
        let headers = WebhookSigner.headers(
            appKey: "ak_test", secret: "as_secret", target: url.target, body: body, timestamp: 1_700_000_000,
            nonce: "0123456789abcdef")
        let fields = Dictionary(uniqueKeysWithValues: headers)
        #expect(fields["X-App-Key"] == "ak_test")
        #expect(fields["X-Timestamp"] == "1700000000")
        #expect(fields["X-Nonce"] == "0123456789abcdef")
        // What SignedRequestVerifier computes for the same request.
        #expect(
            fields["X-Signature"]
                == RequestSignature.sign(
                    secret: "as_secret", method: "POST", pathWithQuery: "/hooks/parley?tenant=a%20b",
                    timestamp: "1700000000", nonce: "0123456789abcdef", body: body))
        // A known answer: HMAC-SHA256 over the documented string to sign, so a change of scheme is caught.
        #expect(
            RequestSignature.stringToSign(
                method: "POST", pathWithQuery: "/", timestamp: "1", nonce: "nnnnnnnn", body: [])
                == "POST\n/\n1\nnnnnnnnn\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func everyAttemptHasAFreshNonce() {
        let nonces = Set((0..<50).map { _ in WebhookSigner.newNonce() })
        #expect(nonces.count == 50)
        #expect(nonces.allSatisfy { $0.utf8.count == 32 })
    }

    @Test func urlWithoutPathSignsSlash() throws {
        #expect(try WebhookURL("http://127.0.0.1:8080").target == "/")
        #expect(try WebhookURL("http://127.0.0.1:8080?x=1").target == "/?x=1")
        #expect(try WebhookURL("http://[::1]:8080/a").host == "::1")
    }

    @Test(arguments: [
        "ftp://example.com/", "example.com/hook", "http://", "http://user:pw@example.com/", "http://a b/",
        "http://example.com:99999/", "http://example.com:x/", "http://example.com/#frag", "http://[::1/",
    ])
    func refusesMalformedURLs(_ text: String) {
        #expect(throws: WebhookSettingsError.self) { try WebhookURL(text) }
    }

    @Test func envelopeCarriesTheEventIdAndThePayloadAsGiven() throws {
        let body = WebhookCaller.envelope(
            eventId: "evt_7", event: "after_send", appKey: "ak_x", createdAt: Date(timeIntervalSince1970: 1.5),
            attempt: 3, data: Array(#"{"message":{"content":{"b":1.50}}}"#.utf8))
        let text = String(decoding: body, as: UTF8.self)
        #expect(
            text
                == #"{"eventId":"evt_7","event":"after_send","appKey":"ak_x","createdAt":1500,"attempt":3,"data":{"message":{"content":{"b":1.50}}}}"#
        )
        _ = try JSONValue.parse(body)
    }

    /// The message events' data, written by the worker from the columns the trigger copied (migrations/0030).
    @Test func aMessageEventsDataIsTheMessageWithItsContentAsStored() throws {
        var message = WebhookMessage(
            id: 42, conversationId: "si:a:b\"c", seq: 7, fromId: "a", toId: "b\"c", chatType: "single",
            msgType: "custom",
            content: #"{"type":"account_conflict","n":1.50,"text":"你好\n"}"#, extra: nil, clientMsgId: "c-1",
            createdAt: 1_700_000_000_123, editedAt: nil)
        let text = String(decoding: message.eventData, as: UTF8.self)
        #expect(
            text
                == #"{"message":{"id":"42","conversationId":"si:a:b\"c","seq":7,"fromId":"a","toId":"b\"c","chatType":"single","msgType":"custom","content":{"type":"account_conflict","n":1.50,"text":"你好\n"},"extra":null,"clientMsgId":"c-1","system":false,"createdAt":1700000000123,"editedAt":null}}"#
        )
        _ = try JSONValue.parse(message.eventData)
        // A revoked one has no content; a system notice is `system`; an edit has its time.
        message.content = nil
        message.msgType = "notify"
        message.extra = #"{"k":[1,2]}"#
        message.editedAt = 1_700_000_000_999
        let parsed = try JSONValue.parse(message.eventData)
        guard case .object(let root) = parsed, case .object(let fields)? = root["message"] else {
            Issue.record("not an object: \(parsed)")
            return
        }
        #expect(fields["content"] == .null)
        #expect(fields["system"] == .bool(true))
        #expect(fields["extra"]?.serializedString == #"{"k":[1,2]}"#)
        #expect(fields["editedAt"]?.serializedString == "1700000000999")
    }

    @Test func eventListsAreParsedAndUnknownNamesRefused() throws {
        #expect(try WebhookEvent.parseList("before_send, after_send,after_send") == [.beforeSend, .afterSend])
        #expect(throws: WebhookSettingsError.self) { try WebhookEvent.parseList("after_send,after_sned") }
        #expect(throws: WebhookSettingsError.self) { try WebhookEvent.parseList(",") }
    }

    @Test func backoffDoublesUpToItsCap() {
        let configuration = WebhookConfiguration()
        #expect(configuration.backoff(afterAttempts: 1) == .seconds(1))
        #expect(configuration.backoff(afterAttempts: 2) == .seconds(2))
        #expect(configuration.backoff(afterAttempts: 5) == .seconds(16))
        #expect(configuration.backoff(afterAttempts: 9) == .seconds(256))
        #expect(configuration.backoff(afterAttempts: 10) == .seconds(300))
        #expect(configuration.backoff(afterAttempts: 1000) == .seconds(300))
    }
}
