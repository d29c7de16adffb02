import Foundation
import ParleyJSON
import ParleyLifecycle
import ParleyObservability
import ParleyPostgres

/// The statistics of `GET /api/admin/stats`: users (a counter kept by triggers on `users`), daily active users and
/// messages per day (counted in memory by each instance, added to `app_daily_counters` by `flush`), and the parts
/// other features contribute. Every figure is a counter read, never a scan.
public final class AdminStatistics: Sendable {
    public let activeUsers = ActiveUsers()
    /// Handed to messaging, which counts each stored message here.
    public let storedMessages = DailyMessageCounts()
    let database: PostgresClient
    let flushInterval: Duration
    let logger: Logger

    init(database: PostgresClient, flushInterval: Duration, logger: Logger) {
        self.database = database
        self.flushInterval = flushInterval
        self.logger = logger
    }

    /// Writes what this instance counted since the last flush (every `PARLEY_STATS_FLUSH_SECONDS`, and at shutdown;
    /// tests call it to read their counts at once). On failure the counts stay for the next flush.
    public func flush() async throws {
        let users = activeUsers.take()
        let messages = storedMessages.take()
        do {
            try await ActiveUsers.write(users, on: database)
        } catch {
            activeUsers.putBack(users)
            storedMessages.putBack(messages)
            throw error
        }
        do {
            try await DailyMessageCounts.write(messages, on: database)
        } catch {
            storedMessages.putBack(messages)
            throw error
        }
    }

    /// The periodic flush and the last one at shutdown.
    var services: [any Service] {
        [
            ResourceService(
                "statistics",
                stop: { [self] in
                    do { try await flush() } catch { log(error) }
                }),
            PeriodicService("statistics flush", every: flushInterval) { [self] in
                do { try await flush() } catch { log(error) }
            },
        ]
    }

    private func log(_ error: any Error) {
        logger.warning("writing statistics failed; will retry", ["error": .string(String(describing: error))])
    }

    /// Days the answer may cover.
    public static let maxDays = 90

    /// The app's statistics over the last `days` UTC days (today included, oldest first).
    func read(appId: Int64, days: Int, contributors: [StatisticsContributor]) async throws -> JSONValue {
        let today = UTCDay.today
        let first = today.adding(days: -Int64(days - 1))
        let userRows = try await database.query(
            "SELECT users FROM app_counters WHERE app_id = \(appId)")
        let total = try userRows.first?.decode("users", as: Int64.self) ?? 0
        let dayRows = try await database.query(
            """
            SELECT (day - DATE '1970-01-01')::bigint AS day_number, active_users, messages FROM app_daily_counters
            WHERE app_id = \(appId) AND day >= \(first.iso)::date AND day <= \(today.iso)::date
            """)
        var byDay: [UTCDay: (active: Int64, messages: Int64)] = [:]
        for row in dayRows {
            byDay[UTCDay(number: try row.decode("day_number"))] = (
                try row.decode("active_users"), try row.decode("messages")
            )
        }
        var activeUsers: [JSONValue] = []
        var messages: [JSONValue] = []
        for offset in 0..<Int64(days) {
            let day = first.adding(days: offset)
            let counts = byDay[day] ?? (0, 0)
            activeUsers.append(.object(["day": .string(day.iso), "count": .number(JSONNumber(counts.active))]))
            messages.append(.object(["day": .string(day.iso), "count": .number(JSONNumber(counts.messages))]))
        }
        var answer = JSONObject([
            ("users", .object(["total": .number(JSONNumber(total))])),
            ("activeUsers", .array(activeUsers)),
            ("messages", .array(messages)),
        ])
        for contributor in contributors {
            answer[contributor.name] = try await contributor.read(appId)
        }
        return .object(answer)
    }
}
