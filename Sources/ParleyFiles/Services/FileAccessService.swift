import ParleyHTTP

/// Who may read a file: its uploader, anyone in a conversation where a message references it, and every user of
/// the app for avatars (see `FileRepository.readable`). Messages may only reference files their sender may read.
public struct FileAccessService: Sendable {
    let repository: FileRepository

    /// Throws the API error to answer when a message may not reference one of `objectKeys` (messaging's
    /// `AttachmentAuthorizer`).
    public func authorize(objectKeys: [String], appId: Int64, userId: String) async throws {
        // A key of another app, or of no shape the server issues: as unknown as any other (nothing is told).
        for key in objectKeys where ObjectKey.appId(of: key) != appId {
            throw APIError.fileNotFound.with(message: "no file `\(key)` in this app")
        }
        let readable = try await repository.readable(appId: appId, userId: userId, objectKeys: objectKeys)
        guard readable.count < Set(objectKeys).count else { return }
        let existing = try await repository.existing(appId: appId, objectKeys: objectKeys)
        for key in objectKeys where !readable.contains(key) {
            if !existing.contains(key) { throw APIError.fileNotFound.with(message: "no file `\(key)` in this app") }
            throw APIError.fileAccessDenied.with(message: "not permitted to use file `\(key)`")
        }
    }
}
