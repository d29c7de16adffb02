/// What `parley rotate-master-key` did to one kind of sealed value.
public struct ResealReport: Sendable, Equatable {
    /// Values sealed under the previous master key, now sealed under the current one.
    public var resealed = 0
    /// Values already under the current key (a second run, or rows written since the rotation began).
    public var alreadyCurrent = 0

    public init(resealed: Int = 0, alreadyCurrent: Int = 0) {
        self.resealed = resealed
        self.alreadyCurrent = alreadyCurrent
    }
}

/// Values that open under neither the current nor the previous master key: the rotation changes nothing.
public struct UnreadableSecrets: Error, CustomStringConvertible {
    public let what: String
    public let owners: [String]

    public init(what: String, owners: [String]) {
        self.what = what
        self.owners = owners
    }

    public var description: String {
        "\(what) of \(owners.joined(separator: ", ")) open under neither PARLEY_MASTER_KEY nor "
            + "PARLEY_PREVIOUS_MASTER_KEY; nothing was changed"
    }
}
