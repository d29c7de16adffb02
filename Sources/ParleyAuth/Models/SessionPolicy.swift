/// What a new login does to the user's other sessions in the same app.
public enum SessionPolicy: String, Sendable, Hashable, CaseIterable, Codable {
    /// One session per platform (ios, android, web, ...): a second login on the same platform ends the first.
    case onePerPlatform = "one_per_platform"
    /// One session in all: any new login ends every other.
    case single
    /// Logins never end other sessions.
    case unlimited
}
