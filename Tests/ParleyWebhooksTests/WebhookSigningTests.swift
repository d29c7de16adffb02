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
            attempt: 3, data: #"{"message":{"content":{"b":1.50}}}"#)
        let text = String(decoding: body, as: UTF8.self)
        #expect(
            text
                == #"{"eventId":"evt_7","event":"after_send","appKey":"ak_x","createdAt":1500,"attempt":3,"data":{"message":{"content":{"b":1.50}}}}"#
        )
        _ = try JSONValue.parse(body)
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
