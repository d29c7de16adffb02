import ParleyHTTP

/// Who may read a file: its uploader, anyone in a conversation where a message references it, and every user of
/// the app for the avatar records profiles name (see `FileRepository.readable`, `AvatarService`). Messages may only reference files their sender may read.
public struct FileAccessService: Sendable {
    let repository: FileRepository

    /// Throws the API error to answer when a message may not reference one of `objectKeys` (messaging's
    /// `AttachmentAuthorizer`): 1302 for every key the sender may not read, whether it exists or not (another user's
    /// private file is as unknown to them as a key never issued, or one of another app).
    public func authorize(objectKeys: [String], appId: Int64, userId: String) async throws {
        for key in objectKeys where ObjectKey.appId(of: key) != appId {
            throw APIError.fileNotFound.with(message: "no file `\(key)` in this app")
        }
        let readable = try await repository.readable(appId: appId, userId: userId, objectKeys: objectKeys)
        for key in objectKeys where !readable.contains(key) {
            throw APIError.fileNotFound.with(message: "no file `\(key)` in this app")
        }
    }
}
