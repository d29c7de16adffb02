import Glibc
import ParleyJSON
import Synchronization

/// Setup through the REST API: IM tokens for many users at once, one registered user with an access token (the
/// group owner: groups are created over REST, which wants an access token, and signed logins hand out IM
/// tokens only), and the group itself.
struct Accounts: Sendable {
    let host: String
    let port: UInt16
    let app: AppCredentials

    /// One IM token per user id, in order, from `workers` blocking clients in parallel. A login answered with a
    /// 5xx or 429 is tried again twice (setup is not what is measured; the retries are counted in the log).
    func imTokens(for userIds: [String], workers: Int) throws(BenchError) -> [String] {
        let tokens = Mutex<[String]>(Array(repeating: "", count: userIds.count))
        let next = Atomic<Int>(0)
        let failure = Mutex<BenchError?>(nil)
        let retries = Atomic<Int>(0)
        let started = MonotonicClock.now()
        let (host, port, app) = (host, port, app)
        Workers.run(max(1, min(workers, userIds.count))) { _ in
            let client = SetupHTTPClient(host: host, port: port)
            while failure.withLock({ $0 == nil }) {
                let index = next.add(1, ordering: .relaxed).oldValue
                guard index < userIds.count else { return }
                var attempt = 0
                while true {
                    do throws(BenchError) {
                        let token = try SignedLogin.login(client, app: app, userId: userIds[index])
                        tokens.withLock { $0[index] = token }
                        break
                    } catch {
                        attempt += 1
                        let transient = error.message.contains("HTTP 5") || error.message.contains("HTTP 429")
                        if attempt >= 3 || !transient {
                            failure.withLock { if $0 == nil { $0 = error } }
                            return
                        }
                        retries.add(1, ordering: .relaxed)
                        usleep(200_000)
                    }
                }
            }
        }
        if let error = failure.withLock({ $0 }) { throw error }
        let seconds = MonotonicClock.seconds(since: started)
        Console.log(
            "signed logins: \(userIds.count) users in \(Console.format(seconds, decimals: 1)) s"
                + " (\(Console.format(Double(userIds.count) / max(seconds, 0.001), decimals: 0))/s, "
                + "\(retries.load(ordering: .relaxed)) retried)")
        return tokens.withLock { $0 }
    }

    /// A registered user (one scrypt hash on the server): user id, access token, IM token.
    func register(username: String, password: String) throws(BenchError)
        -> (userId: String, accessToken: String, imToken: String)
    {
        let client = SetupHTTPClient(host: host, port: port)
        let body = JSONValue.object(
            JSONObject([
                ("username", .string(username)), ("password", .string(password)), ("platform", .string("ios")),
            ])
        ).serialized()
        let data = try client.request("POST", "/api/auth/register", headers: [("X-App-Key", app.appKey)], body: body)
            .data("registering \(username)")
        guard let userId = data["user"]?["id"]?.stringValue, let access = data["accessToken"]?.stringValue,
            let im = data["imToken"]?.stringValue
        else {
            throw BenchError("registering \(username): answer without user.id, accessToken or imToken")
        }
        return (userId, access, im)
    }

    /// `POST /api/im/groups` by the owner; returns the group id.
    func createGroup(name: String, memberIds: [String], accessToken: String) throws(BenchError) -> String {
        let client = SetupHTTPClient(host: host, port: port, timeoutSeconds: 60)
        let body = JSONValue.object(
            JSONObject([
                ("name", .string(name)), ("memberIds", .array(memberIds.map { .string($0) })),
            ])
        ).serialized()
        let data = try client.request(
            "POST", "/api/im/groups", headers: [("Authorization", "Bearer \(accessToken)")],
            body: body
        ).data("creating the group")
        guard let groupId = data["groupId"]?.stringValue else { throw BenchError("creating the group: no groupId") }
        return groupId
    }

    /// `POST /api/im/rooms` by a registered user; returns the room id.
    func createRoom(name: String, accessToken: String) throws(BenchError) -> String {
        let client = SetupHTTPClient(host: host, port: port)
        let body = JSONValue.object(JSONObject([("name", .string(name))])).serialized()
        let data = try client.request(
            "POST", "/api/im/rooms", headers: [("Authorization", "Bearer \(accessToken)")], body: body
        ).data("creating the room")
        guard let roomId = data["roomId"]?.stringValue else { throw BenchError("creating the room: no roomId") }
        return roomId
    }
}
