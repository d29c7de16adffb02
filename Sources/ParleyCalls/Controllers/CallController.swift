import Foundation
import ParleyAuth
import ParleyHTTP
import ParleyJSON

/// `/api/calls...`: the same operations as the WebSocket frames, for apps and for a device woken by a VoIP push.
struct CallController: Sendable {
    let authenticator: Authenticator
    let service: CallService
    let configuration: CallConfiguration

    func register(on router: inout Router) {
        let service = service
        let configuration = configuration
        router.post(
            "/api/calls",
            authenticator.protect { request, _, principal in
                let body = try request.jsonObject()
                return .ok(
                    try await service.invite(CallService.InviteRequest(body, prefix: ""), by: principal), status: 201)
            })
        router.get(
            "/api/calls",
            authenticator.protect { _, _, principal in
                .ok(CallList(calls: try await service.liveCalls(for: principal)))
            })
        // Registered before `{callId}` is read: a literal segment wins.
        router.get(
            "/api/calls/turn",
            authenticator.protect { _, _, principal in
                guard let secret = configuration.turnSecret, !configuration.turnURIs.isEmpty else {
                    throw APIError.turnNotConfigured
                }
                return .ok(
                    TurnCredentials.issue(
                        secret: secret, userId: principal.userId, ttlSeconds: configuration.turnTTLSeconds,
                        uris: configuration.turnURIs, now: Date()))
            })
        router.get(
            "/api/calls/{callId}",
            authenticator.protect { _, context, principal in
                .ok(try await service.call(try context.parameter("callId"), for: principal))
            })
        let actions: [(String, @Sendable (CallService, String, Principal) async throws -> CallView)] = [
            ("accept", { try await $0.accept($1, by: $2) }), ("reject", { try await $0.reject($1, by: $2) }),
            ("cancel", { try await $0.cancel($1, by: $2) }), ("hangup", { try await $0.hangup($1, by: $2) }),
        ]
        for (name, action) in actions {
            router.post(
                "/api/calls/{callId}/\(name)",
                authenticator.protect { _, context, principal in
                    .ok(try await action(service, try context.parameter("callId"), principal))
                })
        }
    }

    struct CallList: Encodable {
        var calls: [CallView]
    }
}

/// The WebSocket frames (`call_invite`, `call_accept`, ...), handed to the realtime gateway by ParleyApp: each takes
/// the frame's `data` and answers its ack's data (the call).
enum CallFrames {
    typealias Handler = @Sendable (_ data: JSONObject, _ principal: Principal) async throws -> [UInt8]

    static func encoded(_ view: CallView) throws -> [UInt8] { try JSONCoding.bytesEncoder.encode(view) }

    static func callId(_ data: JSONObject) throws(APIError) -> String {
        guard case .string(let id)? = data["callId"] else {
            throw APIError.validationFailed.with(message: "`data.callId` must be a string")
        }
        return id
    }

    static func handlers(_ service: CallService) -> [String: Handler] {
        [
            "call_invite": { data, principal in
                try Self.encoded(
                    try await service.invite(CallService.InviteRequest(data, prefix: "data."), by: principal))
            },
            "call_accept": { data, principal in
                try Self.encoded(try await service.accept(try Self.callId(data), by: principal))
            },
            "call_reject": { data, principal in
                try Self.encoded(try await service.reject(try Self.callId(data), by: principal))
            },
            "call_cancel": { data, principal in
                try Self.encoded(try await service.cancel(try Self.callId(data), by: principal))
            },
            "call_hangup": { data, principal in
                try Self.encoded(try await service.hangup(try Self.callId(data), by: principal))
            },
        ]
    }
}
