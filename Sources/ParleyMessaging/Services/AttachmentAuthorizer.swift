/// Checks that a message may reference the object keys in its content: files of the sender's app that the sender
/// may read; throws the API error to answer (unknown key, not permitted) when any key fails. The composition root
/// passes the file service's check, so messaging does not depend on files; without one (no file service wired),
/// keys are only checked for shape.
public typealias AttachmentAuthorizer =
    @Sendable (_ objectKeys: [String], _ appId: Int64, _ userId: String) async throws
    -> Void
