import ParleyJSON

/// What an instance tells the others when a user's status on it changes (the best of the user's connections
/// there): `{"k":"p","a":APP,"n":INSTANCE,"u":USER,"s":"online"|"away"|"offline"}`. `n` is the instance's id in
/// `realtime_instances`, so that a receiver can forget the statuses of an instance whose heartbeat went stale.
struct PresenceDescriptor: Sendable, Equatable {
    static let kind = "p"

    var appId: Int64
    var instanceId: String
    var userId: String
    var status: PresenceStatus

    func serialized() -> [UInt8] {
        JSONValue.object(
            JSONObject([
                ("k", .string(Self.kind)), ("a", .number(JSONNumber(appId))), ("n", .string(instanceId)),
                ("u", .string(userId)), ("s", .string(status.rawValue)),
            ])
        ).serialized()
    }

    /// nil for anything that is not a whole presence descriptor.
    init?(_ object: JSONObject) {
        guard object["k"]?.stringValue == Self.kind, let appId = object["a"]?.int64Value,
            let instanceId = object["n"]?.stringValue, let userId = object["u"]?.stringValue,
            let status = object["s"]?.stringValue.flatMap(PresenceStatus.init(rawValue:))
        else { return nil }
        self.init(appId: appId, instanceId: instanceId, userId: userId, status: status)
    }

    init(appId: Int64, instanceId: String, userId: String, status: PresenceStatus) {
        self.appId = appId
        self.instanceId = instanceId
        self.userId = userId
        self.status = status
    }
}
