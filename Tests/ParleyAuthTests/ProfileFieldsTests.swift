import Foundation
import ParleyLiveSupport
import ParleyPostgres
import Testing

/// Issue 19's profile fields: `signature`, `ex` (the app's own JSON value) and `searchable` through
/// `PATCH /api/users/me`, in every profile answer, and refused whole when any field is bad.
@Suite("Profile fields")
struct ProfileFieldsTests {
    static func patch(_ client: TestClient, _ session: Session, body: String) async throws -> TestResponse {
        try await client.send(
            "PATCH", "/api/users/me", headers: ["Authorization": "Bearer \(session.accessToken)"],
            body: Array(body.utf8))
    }

    @Test func signatureExAndSearchableRoundTrip() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            let alice = try Session(try await client.register(appKey: app.appKey, username: "alice"))
            let bob = try Session(try await client.register(appKey: app.appKey, username: "bob"))

            // Unset: signature "", ex null (present, explicit null), searchable true.
            let fresh = try await client.get("/api/users/me", token: alice.accessToken)
            #expect(fresh.data["signature"] as? String == "")
            #expect(fresh.data["ex"] is NSNull)
            #expect(fresh.data["searchable"] as? Bool == true)

            // ex goes back exactly as sent: member order and numbers' text kept.
            let set = try await Self.patch(
                client, alice,
                body: #"{"signature":"  likes tea\nand cats  ","ex":{"z":1,"a":[1.50,"x",null]},"searchable":false}"#)
            #expect(set.status == 200, "\(set.text)")
            #expect(set.text.contains(#""ex":{"z":1,"a":[1.50,"x",null]}"#), "\(set.text)")
            #expect(set.data["signature"] as? String == "likes tea\nand cats")
            #expect(set.data["searchable"] as? Bool == false)
            #expect(set.data["nickname"] as? String == "alice")

            // Others see signature and ex, never searchable, by id and by lookup.
            let seen = try await client.get("/api/users/\(alice.userId)", token: bob.accessToken)
            #expect(Set(seen.data.keys) == ["id", "nickname", "avatar", "signature", "ex", "deleted"])
            #expect(seen.text.contains(#""ex":{"z":1,"a":[1.50,"x",null]}"#))
            #expect(seen.data["signature"] as? String == "likes tea\nand cats")
            let lookup = try await client.post(
                "/api/users/lookup", json: ["ids": [alice.userId, bob.userId]], token: bob.accessToken)
            let profiles = try #require(lookup.data["users"] as? [[String: Any]])
            #expect(profiles.map { $0["signature"] as? String } == ["likes tea\nand cats", ""])
            #expect(profiles[1]["ex"] is NSNull)

            // Any JSON value; null clears ex, "" clears the signature, absent fields stay.
            let string = try await Self.patch(client, alice, body: #"{"ex":"level 3"}"#)
            #expect(string.data["ex"] as? String == "level 3")
            #expect(string.data["signature"] as? String == "likes tea\nand cats")
            #expect(string.data["searchable"] as? Bool == false)
            let number = try await Self.patch(client, alice, body: #"{"ex":12}"#)
            #expect(number.data["ex"] as? Int == 12)
            let cleared = try await Self.patch(
                client, alice, body: #"{"ex":null,"signature":"","searchable":true,"nickname":null}"#)
            #expect(cleared.status == 200)
            #expect(cleared.data["ex"] is NSNull && cleared.data["signature"] as? String == "")
            #expect(cleared.data["searchable"] as? Bool == true && cleared.data["nickname"] as? String == "alice")
            let stored = try await live.app.database.query(
                "SELECT ex IS NULL AS unset FROM users WHERE id = \(alice.userId)")
            #expect(try stored[0].decode("unset", as: Bool.self))

            // Exactly 4096 bytes of JSON (a string of 4094 characters and its quotes) is the most ex may hold.
            let largest = try await Self.patch(
                client, alice, body: #"{"ex":""# + String(repeating: "x", count: 4094) + #""}"#)
            #expect(largest.status == 200, "\(largest.text)")
            #expect((largest.data["ex"] as? String)?.count == 4094)
        }
    }

    @Test func aBadFieldIsRefusedAndNothingIsStored() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            let alice = try Session(try await client.register(appKey: app.appKey, username: "alice"))
            let baseline = try await Self.patch(
                client, alice, body: #"{"nickname":"Alice","signature":"hi","ex":{"k":1},"searchable":true}"#)
            #expect(baseline.status == 200)

            let tooLongSignature = String(repeating: "s", count: 201)
            let overFourKiB = String(repeating: "x", count: 4095) // 4097 bytes with its quotes
            let refused: [(String, Int)] = [
                (#"{"nickname":"Alicia","signature":"\#(tooLongSignature)"}"#, 1002),
                (#"{"nickname":"Alicia","signature":"tab\there"}"#, 1002),
                (#"{"signature":"carriage\rreturn"}"#, 1002),
                (#"{"signature":"nul\u0000"}"#, 1002),
                (#"{"signature":"c1\u0085"}"#, 1002),
                (#"{"signature":5}"#, 1002),
                (#"{"nickname":"Alicia","ex":"\#(overFourKiB)"}"#, 1002),
                (#"{"ex":{"list":[""# + String(repeating: "y", count: 5000) + #""]}}"#, 1002),
                (#"{"nickname":"Alicia","searchable":"yes"}"#, 1002),
                (#"{"searchable":1}"#, 1002),
                (#"{"nickname":7}"#, 1002),
                (#"{"avatar":["k"]}"#, 1002),
                (#"{"nickname":"Alicia","avatar":""}"#, 1002),
                ("[1]", 1002),
                ("not json", 1001),
                (#"{"ex":1,"ex":2}"#, 1001),
            ]
            for (body, code) in refused {
                let answer = try await Self.patch(client, alice, body: body)
                #expect(answer.status == 400 && answer.code == code, "\(body.prefix(80)): \(answer.text)")
            }
            let after = try await client.get("/api/users/me", token: alice.accessToken)
            #expect(after.data["nickname"] as? String == "Alice")
            #expect(after.data["signature"] as? String == "hi")
            #expect(after.text.contains(#""ex":{"k":1}"#))
            #expect(after.data["searchable"] as? Bool == true)
        }
    }
}
