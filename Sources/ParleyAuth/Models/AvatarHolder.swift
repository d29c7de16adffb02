/// Whose avatar a file is: a user's profile or a group's.
public enum AvatarHolder: Sendable, Hashable {
    case user(String)
    case group(String)

    /// `user` or `group`, as stored with the avatar record.
    public var kind: String {
        switch self {
        case .user: "user"
        case .group: "group"
        }
    }

    public var id: String {
        switch self {
        case .user(let id), .group(let id): id
        }
    }
}

/// Makes `objectKey` the avatar of `holder` on behalf of `userId` and returns the key to store in the profile:
/// throws the API error to answer when the user may not read the file or it is not an image. The file service
/// implements it (an avatar record: a copy of the reference that names its holder); the composition root passes
/// it, so auth and messaging do not depend on files. Without one, keys are only checked for shape.
public typealias AvatarAuthorizer =
    @Sendable (_ objectKey: String, _ holder: AvatarHolder, _ appId: Int64, _ userId: String) async throws
    -> String
