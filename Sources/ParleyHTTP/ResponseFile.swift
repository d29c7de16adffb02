import Glibc

/// An open file descriptor, closed when the last holder lets go: a cache of open blobs and the responses
/// sending one may hold it at once, and eviction from the cache never closes a file under a response.
public final class FileDescriptorHandle: Sendable {
    public let descriptor: Int32

    public init(owning descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }
}

/// A byte range of an open file, sent by the connection with `sendfile(2)` (zero-copy, never held in memory).
/// The descriptor stays open while the response holds it.
public final class ResponseFile: Sendable {
    public let handle: FileDescriptorHandle
    public let offset: Int64
    public let length: Int64
    public var descriptor: Int32 { handle.descriptor }

    /// A range of a file opened for this response alone (closed when the response is done).
    public convenience init(descriptor: Int32, offset: Int64, length: Int64) {
        self.init(handle: FileDescriptorHandle(owning: descriptor), offset: offset, length: length)
    }

    /// A range of a shared open file (sendfile reads at an explicit offset, so sharers never disturb each other).
    public init(handle: FileDescriptorHandle, offset: Int64, length: Int64) {
        self.handle = handle
        self.offset = offset
        self.length = length
    }
}
