/// The NATS subjects of one deployment's relay, all under one prefix (`PARLEY_RELAY_SUBJECT_PREFIX`):
///
///   PREFIX.all                       every instance (presence, chat-room dismissals, member-cache invalidations)
///   PREFIX.u.APP.USERKEY             the instances holding a socket of that user (messaging deliveries)
///   PREFIX.r.APP.ROOM                the instances with a connection inside that chat room
///
/// User ids are the app's own strings (any characters, NATS tokens may not hold dots, spaces or wildcards), so a
/// user's token is a stable 64-bit hash of the id in hex. Two users sharing a hash only cost a wasted message: the
/// receiving instance delivers by the user id inside the payload.
struct RelaySubjects: Sendable, Equatable {
    let prefix: String

    /// nil when `prefix` is not one or more NATS tokens of letters, digits, `_` and `-`.
    init?(prefix: String) {
        guard Self.isValidPrefix(prefix) else { return nil }
        self.prefix = prefix
    }

    static func isValidPrefix(_ prefix: String) -> Bool {
        let tokens = prefix.split(separator: ".", omittingEmptySubsequences: false)
        return !prefix.isEmpty && prefix.utf8.count <= 64
            && tokens.allSatisfy { token in
                !token.isEmpty
                    && token.utf8.allSatisfy { byte in
                        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A)
                            || (byte >= 0x61 && byte <= 0x7A) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
                    }
            }
    }

    var all: String { prefix + ".all" }

    func user(appId: Int64, userId: String) -> String {
        "\(prefix).u.\(appId).\(Self.userKey(userId))"
    }

    func room(_ key: RoomKey) -> String { "\(prefix).r.\(key.appId).\(key.roomId)" }

    /// What a subject names, for an incoming message.
    enum Target: Equatable {
        case all
        case user
        case room
        case unknown
    }

    func target(of subject: String) -> Target {
        guard subject.hasPrefix(prefix), subject.utf8.count > prefix.utf8.count + 1 else { return .unknown }
        let rest = subject.utf8.dropFirst(prefix.utf8.count)
        guard rest.first == UInt8(ascii: ".") else { return .unknown }
        let tail = String(decoding: rest.dropFirst(), as: UTF8.self)
        if tail == "all" { return .all }
        if tail.hasPrefix("u.") { return .user }
        if tail.hasPrefix("r.") { return .room }
        return .unknown
    }

    /// FNV-1a, 64 bits, in 16 hex digits: the same on every instance and every run (Swift's `Hasher` is seeded per
    /// process).
    static func userKey(_ userId: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in userId.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
