import Foundation
import ParleyAuth
import ParleyLiveSupport
import ParleyPostgres
import ParleyTestSupport
import Testing

/// Issue 20's online state (`POST /api/admin/online`) and statistics (`GET /api/admin/stats`).
@Suite("Admin online state and statistics", .serialized)
struct AdminOnlineAndStatsTests {
    static func users(_ response: TestResponse) -> [String: [String: Any]] {
        var byId: [String: [String: Any]] = [:]
        for user in response.data["users"] as? [[String: Any]] ?? [] {
            if let id = user["userId"] as? String { byId[id] = user }
        }
        return byId
    }

    @Test func onlineAnswersForUsersWithLiveSocketsOnly() async throws {
        try await MessagingFixture.run { fx in
            let phone = try await AdminUsersTests.signedDevice(fx, "alice", platform: "ios")
            let web = try await AdminUsersTests.signedDevice(fx, "alice", platform: "web")
            let bob = try await AdminUsersTests.signedDevice(fx, "bob", platform: "android")
            // Carol is signed in, with no socket: not online.
            _ = try await fx.live.signedLogin(
                appKey: fx.appKey, secret: fx.secret, ["appKey": fx.appKey, "userId": "carol", "platform": "ios"])
            // Another app's user with the same id as one asked, online: never shown.
            let (other, otherSecret) = try await fx.live.createApp(name: "Other")
            let theirs = try Session(
                try await fx.live.signedLogin(
                    appKey: other.appKey, secret: otherSecret,
                    ["appKey": other.appKey, "userId": "dave", "platform": "ios"]))
            let theirSocket = try await IMTestClient.connect(port: fx.live.port, token: theirs.imToken)

            let asked = ["alice", "bob", "carol", "dave", "nobody", "alice"]
            // Presence is written off the connect path, in batches: wait until it shows.
            var answer: TestResponse?
            let shown = try await eventually {
                let response = try await fx.admin("POST", "/api/admin/online", json: ["userIds": asked])
                answer = response
                let users = Self.users(response)
                return users["alice"]?["connections"] as? Int == 2 && users["bob"]?["online"] as? Bool == true
            }
            #expect(shown != nil)
            let response = try #require(answer)
            #expect(
                (response.data["users"] as? [[String: Any]])?.map { $0["userId"] as? String } == [
                    "alice", "bob", "carol", "dave", "nobody",
                ])
            let users = Self.users(response)
            #expect(users["alice"]?["platforms"] as? [String] == ["ios", "web"])
            #expect(users["alice"]?["devices"] as? Int == 2)
            #expect(users["bob"]?["platforms"] as? [String] == ["android"])
            for id in ["carol", "dave", "nobody"] {
                #expect(users[id]?["online"] as? Bool == false, "\(id)")
                #expect(users[id]?["platforms"] as? [String] == [], "\(id)")
            }

            // A closed socket goes offline.
            web.socket.close()
            let closed = try await eventually {
                let users = Self.users(try await fx.admin("POST", "/api/admin/online", json: ["userIds": ["alice"]]))
                return users["alice"]?["platforms"] as? [String] == ["ios"]
            }
            #expect(closed != nil)

            for bad: [String: Any] in [
                ["userIds": [String]()], ["userIds": (0..<101).map { "u\($0)" }], ["userIds": ["bad id"]], [:],
            ] {
                let refused = try await fx.admin("POST", "/api/admin/online", json: bad)
                #expect(refused.status == 400 && refused.code == 1002, "\(bad)")
            }
            let unsigned = try await fx.client.post("/api/admin/online", json: ["userIds": ["alice"]])
            #expect(unsigned.status == 401)
            phone.socket.close()
            bob.socket.close()
            theirSocket.close()
        }
    }

    @Test func statisticsCountUsersActiveUsersMessagesOnlineAndFiles() async throws {
        try await MessagingFixture.run { fx in
            let today = UTCDay.today.iso
            func stats(_ query: String = "") async throws -> TestResponse {
                let response = try await fx.admin("GET", "/api/admin/stats" + query)
                #expect(response.status == 200, "\(response.text)")
                return response
            }
            func todays(_ response: TestResponse, _ key: String) -> Int? {
                (response.data[key] as? [[String: Any]])?.last.flatMap { $0["day"] as? String == today ? $0 : nil }?[
                    "count"] as? Int
            }
            let empty = try await stats()
            #expect((empty.data["users"] as? [String: Any])?["total"] as? Int == 0)
            #expect((empty.data["activeUsers"] as? [[String: Any]])?.count == 7)
            #expect(todays(empty, "messages") == 0)
            #expect((empty.data["files"] as? [String: Any])?["count"] as? Int == 0)

            // Users: imports, registrations and signed logins count; a deleted account no longer does.
            _ = try await fx.admin(
                "POST", "/api/admin/users", json: ["users": (0..<5).map { ["userId": "imp_\($0)"] }])
            let alice = try await fx.users(1, prefix: "alice")[0]
            let bob = try await AdminUsersTests.signedDevice(fx, "bob")
            _ = try await fx.live.app.accountDeletion.delete(appId: fx.appId, userId: "imp_0")
            // Messages: counted in memory where they are stored, written by the flush (called here at once).
            for index in 0..<3 { _ = try await fx.sendOK(alice, to: "bob", content: "hello \(index)") }
            _ = try await fx.uploadKey(alice)
            try await fx.live.auth.statistics.flush()

            let counted = try await stats("?days=3")
            #expect((counted.data["users"] as? [String: Any])?["total"] as? Int == 6)
            #expect((counted.data["messages"] as? [[String: Any]])?.count == 3)
            #expect(todays(counted, "messages") == 3)
            // Alice registered, Bob signed in and connected: two users active today, each once.
            #expect(todays(counted, "activeUsers") == 2)
            let files = counted.data["files"] as? [String: Any]
            #expect(files?["count"] as? Int == 1 && (files?["bytes"] as? Int ?? 0) > 0)
            var online: [String: Any]?
            let seen = try await eventually {
                online = try await stats().data["online"] as? [String: Any]
                return online?["users"] as? Int == 1
            }
            #expect(seen != nil && online?["connections"] as? Int == 1)

            // Activity again the same day adds nothing; another app's counts are its own.
            let relogin = try Session(try await fx.client.login(appKey: fx.appKey, username: "alice0"))
            _ = try await fx.sendOK(relogin, to: "bob", content: "once more")
            try await fx.live.auth.statistics.flush()
            let again = try await stats()
            #expect(todays(again, "activeUsers") == 2 && todays(again, "messages") == 4)
            // The backend's own messages count too: a system notice and a broadcast to two users.
            let notice = try await fx.admin(
                "POST", "/api/admin/messages",
                json: ["toId": "bob", "chatType": "single", "msgType": "custom", "content": ["type": "notice"]])
            #expect(notice.status == 201, "\(notice.text)")
            let broadcast = try await fx.admin(
                "POST", "/api/admin/messages/broadcast",
                json: ["userIds": ["bob", alice.userId], "msgType": "custom", "content": ["type": "notice"]])
            #expect(broadcast.data["sent"] as? Int == 2, "\(broadcast.text)")
            try await fx.live.auth.statistics.flush()
            #expect(todays(try await stats(), "messages") == 7)
            let (other, otherSecret) = try await fx.live.createApp(name: "Other")
            let theirs = try await fx.live.adminCall(
                "GET", "/api/admin/stats", appKey: other.appKey, secret: otherSecret)
            #expect((theirs.data["users"] as? [String: Any])?["total"] as? Int == 0)
            #expect(todays(theirs, "messages") == 0 && todays(theirs, "activeUsers") == 0)

            for bad in ["?days=0", "?days=91", "?days=x"] {
                let refused = try await fx.admin("GET", "/api/admin/stats" + bad)
                #expect(refused.status == 400 && refused.code == 1002, "\(bad)")
            }
            #expect(try await fx.client.get("/api/admin/stats").status == 401)
            bob.socket.close()
        }
    }
}
