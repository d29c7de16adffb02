import Foundation
import ParleyJSON
import ParleyLiveSupport
import ParleyTestSupport
import Testing

@testable import ParleyMessaging

/// Content the database cannot read as jsonb (U+0000, numbers beyond numeric) is refused up front with 1002, not
/// stored half-way or answered with a 500.
@Suite("Storable message content")
struct StorableContentTests {
    @Test(arguments: [
        (#""a\u0000b""#, false), (#"{"k\u0000":1}"#, false), (#"[1,[2,{"x":"\u0000"}]]"#, false),
        ("1e10001", false), ("-2.5E-10001", false), ("1e99999999999999999999", false), ("1e10000", true),
        (#"{"a":[1.5e300,-0.0,"\u0001",null,true]}"#, true), (#""plain""#, true),
    ])
    func jsonbRefusesWhatTheCheckRefuses(json: String, storable: Bool) throws {
        let value = try JSONValue.parse(json)
        if storable {
            try StorableJSON.check(value, field: "content")
        } else {
            #expect(throws: (any Error).self) { try StorableJSON.check(value, field: "content") }
        }
    }

    @Test func unstorableContentAndExtraAnswer1002AndStoreNothing() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            let (alice, bob) = (users[0], users[1])
            func send(_ fields: String) async throws -> TestResponse {
                let body = #"{"toId":"\#(bob.userId)","chatType":"single",\#(fields)}"#
                return try await fx.client.send(
                    "POST", "/api/im/messages",
                    headers: ["Authorization": "Bearer \(alice.accessToken)", "Content-Type": "application/json"],
                    body: Array(body.utf8))
            }
            for (fields, field) in [
                (#""msgType":"text","content":"hi\u0000there""#, "content"),
                (#""msgType":"custom","content":{"type":"x","note":"a\u0000"}"#, "content.note"),
                (#""msgType":"custom","content":"{\"type\":\"x\",\"n\":1e400000}""#, "content.n"),
                (#""msgType":"text","content":"hi","extra":{"trace":"\u0000"}"#, "extra.trace"),
                (#""msgType":"location","content":{"lat":1e-99999,"lng":2}"#, "content.lat"),
            ] {
                let answer = try await send(fields)
                #expect(answer.status == 400 && answer.code == 1002, "\(fields): \(answer.text)")
                #expect(answer.message?.contains(field) == true, "\(fields): \(answer.message ?? "")")
            }
            let stored = try await fx.database.query("SELECT count(*) FROM messages WHERE app_id = \(fx.appId)")
            #expect(try stored[0].decode(0, as: Int.self) == 0)
            // Control characters other than NUL are text like any other.
            #expect(try await send(#""msgType":"text","content":"tab\tand\u0001""#).status == 201)
        }
    }
}
