/// Checks that a message may reference the object keys in its content: files of the sender's app that the sender
/// may read. The file service implements it; without one (no file service wired), keys are only checked for shape.
public protocol AttachmentAuthorizer: Sendable {
    /// Throws the API error to answer (unknown key, not permitted) when any key fails.
    func authorize(objectKeys: [String], appId: Int64, userId: String) async throws
}
