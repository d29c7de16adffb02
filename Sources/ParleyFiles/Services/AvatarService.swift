import ParleyAuth
import ParleyHTTP

/// Users' and groups' avatars. Setting a file as an avatar needs the setter to be able to read it (the attachment
/// rule) and the file to be a raster image; the profile then names an avatar record, a copy of the file's
/// reference under a new key that names its holder. Only the record becomes readable by the whole app, and only
/// while the holder's profile names it, so the original key keeps its own readers (a revoke or a removal from a
/// group still takes it away).
public struct AvatarService: Sendable {
    let repository: FileRepository

    public func adopt(objectKey: String, for holder: AvatarHolder, appId: Int64, by userId: String) async throws
        -> String
    {
        guard ObjectKey.appId(of: objectKey) == appId,
            try await repository.readable(appId: appId, userId: userId, objectKeys: [objectKey]).contains(objectKey),
            let file = try await repository.find(objectKey: objectKey)
        else {
            throw APIError.fileNotFound.with(message: "no file `\(objectKey)` in this app")
        }
        // Served as an image: a raster type the sniffer stores (never SVG, whatever an older row says).
        guard DownloadSafety.servedType(stored: file.mimeType).hasPrefix("image/") else {
            throw APIError.avatarNotImage.with(message: "`\(objectKey)` is \(file.mimeType), not an image")
        }
        // Setting the same avatar again keeps its record.
        if file.avatarHolder == holder { return objectKey }
        guard
            let copy = try await repository.insertAvatarRecord(
                copying: objectKey, newKey: ObjectKey.generate(appId: appId), ownerId: userId, holder: holder)
        else {
            throw APIError.fileNotFound.with(message: "no file `\(objectKey)` in this app")
        }
        return copy
    }
}
