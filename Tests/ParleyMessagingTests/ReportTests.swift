import Foundation
import ParleyApp
import ParleyLiveSupport
import ParleyTestSupport
import Testing

/// `POST /api/im/reports` and `parley app reports` (issue 19): users report users, messages and groups they can see;
/// a reported message is kept as it was even when revoked later; reporting again changes nothing. The app's backend
/// pages through them with `GET /api/admin/reports` (issue 20).
@Suite("Reports")
struct ReportTests {
    static func report(_ fx: MessagingFixture, _ by: Session, _ body: [String: Any]) async throws -> TestResponse {
        try await fx.client.post("/api/im/reports", json: body, token: by.accessToken)
    }

    @Test func usersReportWhatTheyCanSeeAndTheEvidenceStays() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(3)
            let (alice, bob, carol) = (users[0], users[1], users[2])
            let sent = try await fx.sendOK(bob, to: alice.userId, content: "buy cheap pills")
            let messageId = try #require(sent["id"] as? String)

            let filed = try await Self.report(
                fx, alice,
                ["targetType": "message", "targetId": messageId, "reason": "spam", "note": "third time\ntoday"])
            #expect(filed.status == 201, "\(filed.text)")
            #expect(filed.string("targetType") == "message")
            #expect(filed.string("reporterId") == alice.userId)
            #expect(filed.string("note") == "third time\ntoday")
            #expect((filed.data["message"] as? [String: Any])?["content"] as? String == "buy cheap pills")

            // The sender revokes it: the report keeps what was sent.
            let revoke = try await fx.client.post("/api/im/messages/\(messageId)/revoke", token: bob.accessToken)
            #expect(revoke.status == 200, "\(revoke.text)")
            // Reporting again returns the first report, unchanged.
            let again = try await Self.report(
                fx, alice, ["targetType": "message", "targetId": messageId, "reason": "other"])
            #expect(again.status == 200)
            #expect(again.string("id") == filed.string("id"))
            #expect(again.string("reason") == "spam")
            #expect((again.data["message"] as? [String: Any])?["content"] as? String == "buy cheap pills")

            // Carol, in no conversation with it, cannot report (or learn of) the message.
            let outsider = try await Self.report(
                fx, carol, ["targetType": "message", "targetId": messageId, "reason": "spam"])
            #expect(outsider.status == 404)
            #expect(outsider.code == 1102)
            // Users and groups of the app.
            #expect(
                try await Self.report(
                    fx, carol, ["targetType": "user", "targetId": bob.userId, "reason": "harassment"]
                )
                .status == 201)
            let group = try await fx.createGroup(bob, members: [alice])
            #expect(
                try await Self.report(fx, carol, ["targetType": "group", "targetId": group.groupId, "reason": "scam"])
                    .status == 201)

            // Bad input: 1002, or the target's own 404, and nothing stored.
            let refusals: [([String: Any], Int)] = [
                (["targetType": "channel", "targetId": "x", "reason": "spam"], 1002),
                (["targetType": "user", "targetId": alice.userId, "reason": "spam"], 1002),
                (["targetType": "user", "targetId": "u_nobody", "reason": "spam"], 1103),
                (["targetType": "group", "targetId": "g_nothing", "reason": "spam"], 1104),
                (["targetType": "message", "targetId": "12x", "reason": "spam"], 1102),
                (["targetType": "user", "targetId": bob.userId, "reason": "  "], 1002),
                (["targetType": "user", "targetId": bob.userId, "reason": String(repeating: "r", count: 65)], 1002),
                (["targetType": "user", "targetId": bob.userId, "reason": "spam", "note": "a\u{0}b"], 1002),
                (["targetType": "user", "targetId": bob.userId], 1002),
            ]
            for (body, code) in refusals {
                let answer = try await Self.report(fx, alice, body)
                #expect(answer.code == code, "\(body): \(answer.status) \(answer.text)")
            }
            let stored = try await fx.database.query(.init(unsafeSQL: "SELECT count(*) FROM reports"))
            #expect(try stored[0].decode(0, as: Int64.self) == 3)

            // The operator's list, newest first; --json carries the message as it was.
            let lines = try await CommandOutput.lines {
                try await AppCommand.run(["reports", fx.appKey], configuration: fx.live.app.configuration, output: $0)
            }
            #expect(lines.count == 3)
            #expect(lines[0].contains("group \(group.groupId)") && lines[0].contains("by \(carol.userId): scam"))
            #expect(lines[2].contains("message \(messageId)") && lines[2].contains("spam (third time today)"))
            let json = try await CommandOutput.lines {
                try await AppCommand.run(
                    ["reports", fx.appKey, "--json", "--limit", "1"], configuration: fx.live.app.configuration,
                    output: $0)
            }
            #expect(json.count == 1 && json[0].contains(#""targetType":"group""#))
            await #expect(throws: AppCommand.UsageError.self) {
                try await AppCommand.run(
                    ["reports", fx.appKey, "--limit", "0"], configuration: fx.live.app.configuration, output: { _ in })
            }
        }
    }

    @Test func theBackendPagesThroughReportsNewestFirst() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(4)
            let group = try await fx.createGroup(users[1], members: [users[2]])
            for reporter in users.dropFirst() {
                #expect(
                    try await Self.report(
                        fx, reporter, ["targetType": "user", "targetId": users[0].userId, "reason": "spam"]
                    ).status == 201)
            }
            #expect(
                try await Self.report(
                    fx, users[0], ["targetType": "group", "targetId": group.groupId, "reason": "scam"]
                ).status == 201)

            func page(_ query: String) async throws -> (ids: [String], reporters: [String], next: String?) {
                let answer = try await fx.admin("GET", "/api/admin/reports" + query)
                #expect(answer.status == 200, "\(answer.text)")
                let reports = try #require(answer.data["reports"] as? [[String: Any]])
                #expect(answer.data.keys.contains("nextCursor"))
                return (
                    reports.compactMap { $0["id"] as? String }, reports.compactMap { $0["reporterId"] as? String },
                    answer.data["nextCursor"] as? String
                )
            }
            let all = try await page("")
            #expect(all.ids.count == 4 && all.next == nil)
            #expect(all.reporters == [users[0].userId, users[3].userId, users[2].userId, users[1].userId])
            // Two pages of two cover the same reports in the same order.
            let first = try await page("?limit=2")
            let cursor = try #require(first.next)
            let second = try await page("?limit=2&cursor=\(cursor)")
            #expect(first.ids + second.ids == all.ids && second.next == nil)
            // One kind of target.
            let groups = try await page("?targetType=group")
            #expect(groups.reporters == [users[0].userId])
            // Another app sees none of them.
            let (other, otherSecret) = try await fx.live.createApp(name: "Other")
            let theirs = try await fx.live.adminCall(
                "GET", "/api/admin/reports", appKey: other.appKey, secret: otherSecret)
            #expect((theirs.data["reports"] as? [Any])?.isEmpty == true)
            for bad in ["?limit=0", "?limit=201", "?cursor=x", "?cursor=", "?cursor=01", "?targetType=channel"] {
                let refused = try await fx.admin("GET", "/api/admin/reports" + bad)
                #expect(refused.status == 400 && refused.code == 1002, "\(bad)")
            }
            #expect(try await fx.client.get("/api/admin/reports").status == 401)
        }
    }
}
