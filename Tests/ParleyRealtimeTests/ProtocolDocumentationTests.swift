import Foundation
import ParleyLiveSupport
import ParleyMessaging
import ParleyWebSocket
import Testing

@testable import ParleyRealtime

/// docs/protocol.md and openapi.yaml name every frame, close code and error the gateway uses.
struct ProtocolDocumentationTests {
    @Test func protocolDocumentNamesEveryFrameAndCloseCode() throws {
        let text = try RepositoryDocuments.text("docs/protocol.md")
        for type in [
            "hello", "ack", "error", "send", "revoke", "edit", "read", "typing", "sync", "ping", "message",
            "conversation", "account_conflict", "session_ended", "token_expired", "room_enter", "room_leave",
            "room_dismissed", "presence_set", "presence_subscribe", "presence_unsubscribe", "presence",
        ] + UserEventKind.allCases.map(\.rawValue) + ConversationEventKind.allCases.map(\.rawValue) {
            #expect(text.contains("`\(type)`"), "frame `\(type)` missing from docs/protocol.md")
        }
        let codes: [WebSocketCloseCode] = [
            .slowConsumer, .heartbeatTimeout, .tokenExpired, .resyncRequired,
            .accountConflict, .sessionEnded, .tooManyPendingRequests, .replacedByNewerConnection,
        ]
        for code in codes {
            #expect(text.contains("| \(code.rawValue) |"), "close code \(code.rawValue) missing from docs/protocol.md")
        }
        for code in [1202, 1203, 1510, 1511] + (1505...1508).map({ $0 }) { #expect(text.contains("| \(code) |")) }
    }

    @Test func openAPIDescribesTheUpgradeAndTheCodes() throws {
        let yaml = try RepositoryDocuments.text("openapi.yaml")
        #expect(yaml.contains("\n  /ws:\n    get:"))
        #expect(yaml.contains("docs/protocol.md"))
        for code in Array(1200...1203) + Array(1505...1508) + [1510, 1511] {
            #expect(yaml.contains("| \(code) |"), "code \(code) missing from openapi.yaml")
        }
    }
}
